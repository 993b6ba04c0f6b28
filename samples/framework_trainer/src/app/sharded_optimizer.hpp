// ZeRO stage 1 as a first hand-written version does it (framework_trainer/zero_shards.hpp),
// everything on the compute stream: after backward each gradient is copied into its bucket's
// flat buffer and each bucket reduce-scattered in place; the SGD step updates only this rank's
// shard of a flat copy of each bucket's parameters (multi-tensor apply over the shards); each
// bucket's parameters are all-gathered in place and copied back into the model's tensors.
#pragma once

#include "step_context.hpp"

#include "framework_trainer/tensor_lists.hpp"
#include "framework_trainer/zero_shards.hpp"

#include <nccl.h>

#include <vector>

namespace framework_trainer {

class ShardedOptimizer {
 public:
  // Allocates the flat buffers (padding zeroed) and fills the parameter buckets from the
  // model's parameters, which must already hold their initial values.
  ShardedOptimizer(const StepContext& ctx, ncclComm_t comm, int world_size);

  int buckets() const { return static_cast<int>(buckets_.size()); }

  // After backward: each gradient into its bucket, a reduce-scatter (average) per bucket.
  void reduceScatterGradients();
  // SGD on this rank's shard of every bucket.
  void stepShard();
  // An all-gather per bucket of the updated parameters, copied back into the model's tensors.
  void gatherParameters();

 private:
  const StepContext& ctx_;
  ncclComm_t comm_;
  std::vector<ShardedBucket> buckets_;
  std::vector<DeviceTensor<float>> grad_buckets_, param_buckets_;
  std::vector<TensorListLaunch> step_plan_;
  std::vector<TensorListMetadata<2>> step_lists_;
};

}  // namespace framework_trainer
