#include "framework_trainer/op_counts.hpp"

#include "framework_trainer/tensor_lists.hpp"

namespace framework_trainer {

int forwardKernels(int layers) {
  // embedding; per block ln_1, c_attn, attention, c_proj, residual add, ln_2, c_fc, gelu,
  // c_proj, residual add; ln_f, LM head, cross-entropy.
  return 1 + 10 * layers + 3;
}

int backwardKernels(int layers) {
  // cross-entropy; the LM head's input and weight gradients; ln_f; per block (reversed) the MLP
  // projection's three gradients (input, weight, bias), gelu, c_fc's three, ln_2, residual add,
  // the attention projection's three, attention, c_attn's three, ln_1, residual add; embedding.
  return 1 + 2 + 1 + 18 * layers + 1;
}

int multiTensorLaunches(const ParamLayout& layout, int depth) {
  std::vector<std::int64_t> numels;
  for (const ParamSpec& p : layout.params()) numels.push_back(p.numel());
  return static_cast<int>(planTensorLists(numels, depth).size());
}

OpCounts iterationOpCounts(const ModelConfig& config, SyncMode mode, int buckets) {
  const ParamLayout layout(config);
  OpCounts c;
  c.kernels = forwardKernels(config.layers) + backwardKernels(config.layers) + multiTensorLaunches(layout, 2) +
              multiTensorLaunches(layout, 1);
  c.memcpys = 3;  // the batch's tokens in; the check's chunk hashes and probes out
  if (mode == SyncMode::Naive) {
    c.collectives = layout.size();
  } else {
    c.memcpys += 2 * layout.size();  // each gradient into its bucket and back
    c.collectives = buckets;
  }
  return c;
}

}  // namespace framework_trainer
