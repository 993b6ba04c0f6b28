// ZeRO stage 1 as a first hand-written version does it (framework_trainer/zero_shards.hpp),
// everything on the compute stream, over the flat buckets the model's parameters and gradients
// are views into (model_tensors.hpp), so that nothing is copied: after backward, which wrote
// every gradient into its bucket, each gradient bucket is reduce-scattered in place; the SGD
// step updates only this rank's shard of each parameter bucket (multi-tensor apply over the
// shards), from the averaged shard the reduce-scatter left; each parameter bucket is
// all-gathered in place, where the next forward reads it.
#pragma once

#include "sgd_step.hpp"
#include "step_context.hpp"

#include "framework_trainer/tensor_lists.hpp"

#include <nccl.h>

#include <vector>

namespace framework_trainer {

class ShardedOptimizer {
 public:
  // The step's lists over this rank's shards of `ctx.tensors`' buckets.
  ShardedOptimizer(const StepContext& ctx, ncclComm_t comm);

  int buckets() const { return static_cast<int>(ctx_.tensors.buckets().size()); }

  // After backward: a reduce-scatter (average) per gradient bucket, in place.
  void reduceScatterGradients();
  // SGD on this rank's shard of every parameter bucket.
  void stepShard();
  // An all-gather per parameter bucket of the updated shards, in place.
  void gatherParameters();

 private:
  const StepContext& ctx_;
  ncclComm_t comm_;
  SgdStep step_;
};

}  // namespace framework_trainer
