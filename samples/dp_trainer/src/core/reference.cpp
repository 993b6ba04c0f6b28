#include "dp_trainer/reference.hpp"

#include "dp_trainer/layer_math.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace dp_trainer {
namespace {

// Independent random streams drawn from the one seed.
enum class Stream : std::uint64_t { Inputs = 1, TargetMap = 2, InitialWeights = 3 };

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A counter-based draw: the same arguments give the same value on every rank and run.
// 24 random bits make the value exact in float.
float uniformSigned(std::uint64_t seed, Stream stream, std::uint64_t a, std::uint64_t b, std::uint64_t c = 0) {
  std::uint64_t h = splitmix64(seed);
  for (std::uint64_t v : {static_cast<std::uint64_t>(stream), a, b, c}) h = splitmix64(h ^ v);
  const auto bits = static_cast<float>(h >> 40);  // [0, 2^24)
  return bits * (2.0f / 16777216.0f) - 1.0f;
}

double tolerantScale(double largest) { return largest > 0.0 ? largest : 1e-30; }

}  // namespace

Batch makeBatch(const ModelShape& shape, std::uint64_t seed, int rank, int iteration) {
  const int width = shape.width;
  Batch batch;
  batch.inputs.resize(shape.activationCount());
  batch.targets.resize(shape.activationCount());
  for (int b = 0; b < shape.batch; ++b) {
    for (int k = 0; k < width; ++k) {
      batch.inputs[static_cast<std::size_t>(b * width + k)] =
          uniformSigned(seed, Stream::Inputs, static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(iteration),
                        static_cast<std::uint64_t>(b * width + k));
    }
  }
  // A's entries have variance 3/width, so (A x) has variance about 1 for inputs of variance 1/3.
  const double a_scale = std::sqrt(3.0 / width);
  for (int b = 0; b < shape.batch; ++b) {
    for (int j = 0; j < width; ++j) {
      double sum = 0.0;
      for (int k = 0; k < width; ++k) {
        const double a = a_scale * uniformSigned(seed, Stream::TargetMap, static_cast<std::uint64_t>(j),
                                                 static_cast<std::uint64_t>(k));
        sum += a * batch.inputs[static_cast<std::size_t>(b * width + k)];
      }
      batch.targets[static_cast<std::size_t>(b * width + j)] = static_cast<float>(0.5 * std::tanh(sum));
    }
  }
  return batch;
}

std::vector<float> initialParams(const ModelShape& shape, std::uint64_t seed) {
  std::vector<float> params(shape.paramCount(), 0.0f);
  const float scale = 0.5f / std::sqrt(static_cast<float>(shape.width));
  for (int layer = 0; layer < shape.layers; ++layer) {
    float* w = params.data() + shape.layerOffset(layer);
    for (std::size_t i = 0; i < shape.biasOffset(); ++i) {
      w[i] = scale * uniformSigned(seed, Stream::InitialWeights, static_cast<std::uint64_t>(layer), i);
    }
  }
  return params;
}

ReferenceStep referenceStep(const ModelShape& shape, std::span<const float> params, const Batch& batch) {
  const int width = shape.width;
  const std::size_t n = shape.activationCount();
  const auto at = [width](int b, int j) { return static_cast<std::size_t>(b * width + j); };

  // outs[l] is block l's input (outs[0] the batch); acts[l] its tanh.
  std::vector<std::vector<double>> outs(static_cast<std::size_t>(shape.layers) + 1, std::vector<double>(n));
  std::vector<std::vector<double>> acts(static_cast<std::size_t>(shape.layers), std::vector<double>(n));
  std::copy(batch.inputs.begin(), batch.inputs.end(), outs[0].begin());
  for (int l = 0; l < shape.layers; ++l) {
    const float* p = params.data() + shape.layerOffset(l);
    const auto& in = outs[static_cast<std::size_t>(l)];
    auto& act = acts[static_cast<std::size_t>(l)];
    auto& out = outs[static_cast<std::size_t>(l) + 1];
    for (int b = 0; b < shape.batch; ++b) {
      for (int j = 0; j < width; ++j) {
        double pre = p[shape.biasOffset() + static_cast<std::size_t>(j)];
        for (int k = 0; k < width; ++k) pre += static_cast<double>(p[at(j, k)]) * in[at(b, k)];
        act[at(b, j)] = std::tanh(pre);
        out[at(b, j)] = in[at(b, j)] + act[at(b, j)];
      }
    }
  }

  ReferenceStep step;
  step.grads.assign(shape.paramCount(), 0.0);
  std::vector<double> grad(n);
  const auto& final_out = outs.back();
  for (std::size_t i = 0; i < n; ++i) {
    const double d = final_out[i] - batch.targets[i];
    step.loss += d * d;
    grad[i] = 2.0 * d / static_cast<double>(n);
  }
  step.loss /= static_cast<double>(n);

  std::vector<double> delta(n);
  for (int l = shape.layers - 1; l >= 0; --l) {
    const float* p = params.data() + shape.layerOffset(l);
    double* g = step.grads.data() + shape.layerOffset(l);
    const auto& in = outs[static_cast<std::size_t>(l)];
    const auto& act = acts[static_cast<std::size_t>(l)];
    for (std::size_t i = 0; i < n; ++i) delta[i] = grad[i] * (1.0 - act[i] * act[i]);
    for (int b = 0; b < shape.batch; ++b) {
      for (int j = 0; j < width; ++j) {
        g[shape.biasOffset() + static_cast<std::size_t>(j)] += delta[at(b, j)];
        for (int k = 0; k < width; ++k) g[at(j, k)] += delta[at(b, j)] * in[at(b, k)];
      }
    }
    // The residual path passes grad through unchanged; W^T delta is added to it.
    for (int b = 0; b < shape.batch; ++b) {
      for (int j = 0; j < width; ++j) {
        for (int k = 0; k < width; ++k) grad[at(b, k)] += delta[at(b, j)] * static_cast<double>(p[at(j, k)]);
      }
    }
  }
  return step;
}

ExpectedStep expectedStep(const ModelShape& shape, std::span<const float> params, std::uint64_t seed,
                          int world_size, int iteration) {
  ExpectedStep expected;
  expected.grads.assign(shape.paramCount(), 0.0);
  for (int rank = 0; rank < world_size; ++rank) {
    const ReferenceStep step = referenceStep(shape, params, makeBatch(shape, seed, rank, iteration));
    expected.losses.push_back(step.loss);
    for (std::size_t i = 0; i < step.grads.size(); ++i) expected.grads[i] += step.grads[i];
  }
  for (double& g : expected.grads) g /= static_cast<double>(world_size);
  return expected;
}

CheckResult checkGradients(const ModelShape& shape, std::span<const float> got, std::span<const double> expected,
                           double tolerance) {
  if (got.size() != shape.paramCount() || expected.size() != shape.paramCount()) {
    return {false, fmt::format("gradient size mismatch: got {} values, expected {} (model has {} parameters)",
                               got.size(), expected.size(), shape.paramCount())};
  }
  for (int l = 0; l < shape.layers; ++l) {
    const std::size_t begin = shape.layerOffset(l);
    const std::size_t end = begin + shape.paramsPerLayer();
    double largest = 0.0;
    for (std::size_t i = begin; i < end; ++i) largest = std::max(largest, std::abs(expected[i]));
    const double allowed = tolerance * tolerantScale(largest);
    for (std::size_t i = begin; i < end; ++i) {
      const double error = std::abs(static_cast<double>(got[i]) - expected[i]);
      if (!(error <= allowed)) {  // also catches NaN
        const std::size_t local = i - begin;
        const std::string what =
            local < shape.biasOffset()
                ? fmt::format("W[{}][{}]", local / static_cast<std::size_t>(shape.width),
                              local % static_cast<std::size_t>(shape.width))
                : fmt::format("b[{}]", local - shape.biasOffset());
        return {false, fmt::format("layer {} gradient {} (flat index {}): got {:.9g}, expected {:.9g} "
                                   "(allowed error {:.3g})",
                                   l, what, i, got[i], expected[i], allowed)};
      }
    }
  }
  return {};
}

CheckResult checkLoss(double got, double expected, double tolerance) {
  const double allowed = tolerance * std::max(std::abs(expected), 1e-30);
  if (!(std::abs(got - expected) <= allowed)) {
    return {false, fmt::format("loss {:.9g} differs from the reference {:.9g} (allowed error {:.3g})", got,
                               expected, allowed)};
  }
  return {};
}

void sgdUpdate(std::span<float> params, std::span<const float> grads, float lr) {
  if (params.size() != grads.size()) throw std::invalid_argument("sgdUpdate: params and grads differ in size");
  for (std::size_t i = 0; i < params.size(); ++i) params[i] = math::sgdElement(params[i], grads[i], lr);
}

std::uint64_t gradientChecksum(std::span<const float> grads) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(grads.data());
  for (std::size_t i = 0; i < grads.size_bytes(); ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace dp_trainer
