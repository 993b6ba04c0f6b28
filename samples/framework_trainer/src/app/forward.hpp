// The forward pass, issued on the main thread on the compute stream: every activation a
// backward kernel reads is a tensor of the caching allocator, kept until backward releases it.
#pragma once

#include "step_context.hpp"
#include "unit_hooks.hpp"

#include <vector>

namespace framework_trainer {

struct BlockActivations {
  DeviceTensor<float> input, h1, mean1, rstd1, qkv, attn, lse, proj, x2, h2, mean2, rstd2, f, g, m;
};

struct Activations {
  DeviceTensor<int> tokens;  // the real tokens' inputs, then their targets
  std::vector<BlockActivations> blocks;
  DeviceTensor<float> last, hf, mean_f, rstd_f, logits, loss;
};

// `tokens_host` is this iteration's pinned staging (2 * kRealTokens ints), already filled;
// `units` runs around each unit's kernels (unit_hooks.hpp).
Activations issueForward(const StepContext& ctx, const int* tokens_host, UnitHooks& units);

// This rank's real tokens at `iteration`: kRealTokens inputs, then their targets.
void fillTokens(int* tokens_host, std::uint64_t seed, int rank, int iteration, int vocab);

}  // namespace framework_trainer
