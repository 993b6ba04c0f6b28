#include "sharded_optimizer.hpp"

namespace framework_trainer {

ShardedOptimizer::ShardedOptimizer(const StepContext& ctx, ncclComm_t comm) : ctx_(ctx), comm_(comm) {
  std::vector<const void*> params, grads;
  std::vector<std::int64_t> numels;
  for (const FlatBucket& b : ctx.tensors.buckets()) {
    params.push_back(b.params.get() + b.layout.shardOffset(ctx.rank));
    grads.push_back(b.grads.get() + b.layout.shardOffset(ctx.rank));
    numels.push_back(static_cast<std::int64_t>(b.layout.shard_numel));
  }
  step_ = SgdStep(params, grads, numels);
}

void ShardedOptimizer::reduceScatterGradients() {
  // The reduce-scatter leaves the average only in this rank's shard, the rest of the bucket
  // holding this rank's own gradients: no zero_grad is needed before the next backward, which
  // writes every element of every gradient (backward.hpp: the first contribution is an
  // assignment, only the tied embedding's second adds to it), and never the padding, which
  // stays zero as the average of zeros. Zeroing the buckets every iteration, as frameworks whose
  // backward accumulates into main_grad must, would only add a pass over the gradients.
  for (const FlatBucket& b : ctx_.tensors.buckets()) {
    // In place: this rank's shard of the average is written where its own shard was.
    FT_COLLECTIVE(ctx_.issue, ncclReduceScatter(b.grads.get(), b.grads.get() + b.layout.shardOffset(ctx_.rank),
                                                b.layout.shard_numel, ncclFloat, ncclAvg, comm_, ctx_.compute));
  }
}

void ShardedOptimizer::stepShard() { step_.issue(ctx_.issue, ctx_.compute, ctx_.options.lr); }

void ShardedOptimizer::gatherParameters() {
  for (const FlatBucket& b : ctx_.tensors.buckets()) {
    // In place, from this rank's shard: every rank's updated shard lands in its place.
    FT_COLLECTIVE(ctx_.issue, ncclAllGather(b.params.get() + b.layout.shardOffset(ctx_.rank), b.params.get(),
                                            b.layout.shard_numel, ncclFloat, comm_, ctx_.compute));
  }
}

}  // namespace framework_trainer
