#include "framework_trainer/grad_check.hpp"

#include "framework_trainer/device_math.hpp"

#include <fmt/format.h>

#include <cmath>

namespace framework_trainer {

GradRule gradRule(std::uint64_t seed, int rank, int iteration, int tensor, int contribution) {
  const std::uint64_t key = math::mix64(seed ^ 0x6772616473ull) ^ (static_cast<std::uint64_t>(rank) << 48) ^
                            (static_cast<std::uint64_t>(iteration) << 20) ^ (static_cast<std::uint64_t>(tensor) << 2) ^
                            static_cast<std::uint64_t>(contribution);
  const std::uint64_t bits = math::mix64(key);
  GradRule rule;
  // scale in [0.005, 0.015), shift in [-0.001, 0.001): a gradient of the order of GPT-2's.
  rule.scale = math::add(0.01f, math::mul(0.005f, math::unitValue(bits)));
  rule.shift = math::mul(0.001f, math::unitValue(math::mix64(bits)));
  rule.accumulate = contribution > 0 ? 1 : 0;
  return rule;
}

std::uint64_t foldChunkHashes(std::span<const std::uint64_t> chunk_hashes) {
  std::uint64_t hash = math::kFnvOffset;
  for (const std::uint64_t h : chunk_hashes) {
    hash = math::fnvWord(hash, static_cast<std::uint32_t>(h));
    hash = math::fnvWord(hash, static_cast<std::uint32_t>(h >> 32));
  }
  return hash;
}

ProbeCheck::ProbeCheck(const ParamLayout& layout, std::uint64_t seed, int world_size, float lr, Probed probed)
    : layout_(layout), probed_(probed), seed_(seed), world_size_(world_size), lr_(lr) {
  for (int t = 0; t < layout.size(); ++t) {
    mirror_.push_back(math::initValue(seed, t, 0));
    mirror_.push_back(math::initValue(seed, t, layout[t].numel() - 1));
  }
}

std::string ProbeCheck::check(int iteration, std::span<const float> probes) {
  if (probes.size() != mirror_.size()) {
    return fmt::format("iteration {}: {} probed values, expected {}", iteration, probes.size(), mirror_.size());
  }
  const int contributions_of_wte = 2;  // the LM head's and the embedding's
  for (int t = 0; t < layout_.size(); ++t) {
    const int contributions = t == layout_.tokenEmbedding() ? contributions_of_wte : 1;
    for (int end = 0; end < 2; ++end) {
      const std::size_t i = static_cast<std::size_t>(2 * t + end);
      double sum = 0;
      for (int rank = 0; rank < world_size_; ++rank) {
        float g = 0.0f;
        for (int c = 0; c < contributions; ++c) math::applyGradRule(gradRule(seed_, rank, iteration, t, c), mirror_[i], g);
        sum += g;
      }
      const double average = sum / world_size_;
      const bool gradients = probed_ == Probed::Gradients;
      const double expected =
          gradients ? average : math::sgdElement(mirror_[i], static_cast<float>(average), lr_);
      const double got = probes[i];
      // Float rounding of a handful of operations and of the collective's sum; a lost, doubled or
      // stale rank, or a stale weight, is off by orders of magnitude more.
      if (!(std::fabs(got - expected) <= 1e-9 + 1e-5 * std::fabs(expected))) {
        return fmt::format("iteration {}: the {} of {} at element {} is {:.9g}, {} should be {:.9g}", iteration,
                           gradients ? "synchronised gradient" : "updated parameter", layout_[t].name,
                           end == 0 ? 0 : layout_[t].numel() - 1, got,
                           gradients ? fmt::format("the average over the {} ranks", world_size_)
                                     : fmt::format("SGD with the average gradient over the {} ranks", world_size_),
                           expected);
      }
    }
  }
  // The device's values go on: the next gradients are computed from its weights.
  for (std::size_t i = 0; i < mirror_.size(); ++i) {
    mirror_[i] = probed_ == Probed::Gradients ? math::sgdElement(mirror_[i], probes[i], lr_) : probes[i];
  }
  return {};
}

}  // namespace framework_trainer
