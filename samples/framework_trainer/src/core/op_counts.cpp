#include "framework_trainer/op_counts.hpp"

#include "framework_trainer/ddp_buckets.hpp"
#include "framework_trainer/fsdp_units.hpp"
#include "framework_trainer/tensor_lists.hpp"
#include "framework_trainer/zero_shards.hpp"

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

OpCounts iterationOpCounts(const ModelConfig& config, SyncMode mode, const BucketSizing& buckets, int world_size,
                           bool gradient_as_bucket_view) {
  const ParamLayout layout(config);
  OpCounts c;
  // The check hashes every parameter tensor (zero1, fsdp) or gradient tensor (the others): one
  // list.
  c.kernels = forwardKernels(config.layers) + backwardKernels(config.layers) + multiTensorLaunches(layout, 1);
  c.memcpys = 3;  // the batch's tokens in; the check's chunk hashes and probes out
  switch (mode) {
    case SyncMode::Naive:
      c.kernels += multiTensorLaunches(layout, 2);
      c.collectives = layout.size();
      break;
    case SyncMode::Ddp:
      c.kernels += multiTensorLaunches(layout, 2);
      // Each gradient divided into its bucket (in place with views), and copied back without views.
      c.kernels += layout.size();
      if (!gradient_as_bucket_view) c.memcpys += layout.size();
      c.collectives = static_cast<std::int64_t>(modelBuckets(layout, buckets).size());
      break;
    case SyncMode::Zero1: {
      const std::vector<ShardedBucket> shards = shardBuckets(modelBuckets(layout, buckets), world_size);
      // The step over this rank's shard of each bucket; a reduce-scatter and an all-gather per
      // bucket, in place in the buckets the tensors are views into: no copies.
      c.kernels += static_cast<std::int64_t>(planTensorLists(shardNumels(shards), 2).size());
      c.collectives = 2 * static_cast<std::int64_t>(shards.size());
      break;
    }
    case SyncMode::Fsdp: {
      const std::vector<ShardedBucket> units = fsdpUnits(config, world_size);
      const auto n = static_cast<std::int64_t>(units.size());
      // The step over this rank's shard of each unit. Each unit's parameters are gathered for
      // its forward and again for its backward, but the root's only once (it is kept from its
      // forward to its backward); each unit's gradients are reduce-scattered once; the check
      // gathers every unit's updated parameters (on its own stream and communicator). The full
      // gradient buffer's padding is zeroed in the units that have some.
      c.kernels += static_cast<std::int64_t>(planTensorLists(shardNumels(units), 2).size());
      c.collectives = (2 * n - 1) + n + n;
      c.memsets = paddedUnits(units);
      break;
    }
  }
  return c;
}

}  // namespace framework_trainer
