// Per-element maths shared by the CUDA kernels and their CPU implementations, so that both
// compute the same values: the initial weights, the gradient rule, the SGD step and the
// gradient checksum round identically on a GPU, in simgpu and in the host's check
// (sample_common/exact_float.hpp). The activations' maths (GELU, layer norm) uses the
// platform's tanhf/sqrtf: nothing checks activations bit for bit.
#pragma once

#include "framework_trainer/kernel_args.hpp"
#include "sample_common/exact_float.hpp"

#include <cmath>
#include <cstdint>

namespace framework_trainer::math {

using sample_common::exact::add;
using sample_common::exact::mul;
using sample_common::exact::sgdElement;
using sample_common::exact::sub;

// SplitMix64's finaliser: a well-mixed 64-bit value from any input.
SAMPLE_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A value uniform in [-1, 1) from 24 bits of `bits`: exact in float.
SAMPLE_HOST_DEVICE inline float unitValue(std::uint64_t bits) {
  return static_cast<float>(static_cast<std::int32_t>(bits >> 40) - (1 << 23)) * (1.0f / static_cast<float>(1 << 23));
}

// Initial value of element `index` of parameter tensor `tensor`: uniform in [-0.02, 0.02), as
// GPT-2's normal(0, 0.02) initialisation in scale.
SAMPLE_HOST_DEVICE inline float initValue(std::uint64_t seed, int tensor, std::int64_t index) {
  const std::uint64_t key = mix64(seed ^ (static_cast<std::uint64_t>(tensor) << 40)) ^ static_cast<std::uint64_t>(index);
  return mul(0.02f, unitValue(mix64(key)));
}

// The gradient rule (kernel_args.hpp, GradRule): writes `grad`, or adds to it.
SAMPLE_HOST_DEVICE inline void applyGradRule(const GradRule& rule, float param, float& grad) {
  const float value = add(mul(rule.scale, param), rule.shift);
  grad = rule.accumulate != 0 ? add(grad, value) : value;
}

// FNV-1a over 32-bit words: the checksum of a chunk of gradients.
inline constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
inline constexpr std::uint64_t kFnvPrime = 1099511628211ull;
SAMPLE_HOST_DEVICE inline std::uint64_t fnvWord(std::uint64_t hash, std::uint32_t word) {
  return (hash ^ word) * kFnvPrime;
}

SAMPLE_HOST_DEVICE inline float gelu(float x) {
  const float inner = 0.7978845608f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

SAMPLE_HOST_DEVICE inline float geluGrad(float x) {
  const float inner = 0.7978845608f * (x + 0.044715f * x * x * x);
  const float t = tanhf(inner);
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * 0.7978845608f * (1.0f + 3.0f * 0.044715f * x * x);
}

}  // namespace framework_trainer::math
