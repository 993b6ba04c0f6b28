#include "sharded_optimizer.hpp"

#include "kernels.hpp"

#include <array>

namespace framework_trainer {

ShardedOptimizer::ShardedOptimizer(const StepContext& ctx, ncclComm_t comm, int world_size)
    : ctx_(ctx), comm_(comm), buckets_(shardBuckets(modelBuckets(ctx.layout, ctx.options.bucketBytes()), world_size)) {
  std::array<std::vector<const void*>, 2> shards;
  for (const ShardedBucket& b : buckets_) {
    const auto padded = static_cast<std::int64_t>(b.padded_numel);
    DeviceTensor<float>& grads = grad_buckets_.emplace_back(ctx.allocator, padded, ctx.compute);
    DeviceTensor<float>& params = param_buckets_.emplace_back(ctx.allocator, padded, ctx.compute);
    // The padding is stepped and gathered with the rest: zeros keep it finite.
    ctx.issue.memset(grads.get(), grads.bytes(), ctx.compute);
    ctx.issue.memset(params.get(), params.bytes(), ctx.compute);
    for (std::size_t i = 0; i < b.bucket.params.size(); ++i) {
      const int param = b.bucket.params[i];
      ctx.issue.copy(params.get() + b.bucket.offsets[i], ctx.param(param), ctx.layout[param].bytes(),
                     cudaMemcpyDeviceToDevice, ctx.compute);
    }
    shards[0].push_back(params.get() + b.shardOffset(ctx.rank));
    shards[1].push_back(grads.get() + b.shardOffset(ctx.rank));
  }
  const std::vector<std::int64_t> numels = shardNumels(buckets_);
  step_plan_ = planTensorLists(numels, 2);
  step_lists_ = fillTensorLists<2>(step_plan_, shards, numels);
}

void ShardedOptimizer::reduceScatterGradients() {
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    const ShardedBucket& bucket = buckets_[b];
    float* flat = grad_buckets_[b].get();
    for (std::size_t i = 0; i < bucket.bucket.params.size(); ++i) {
      const int param = bucket.bucket.params[i];
      ctx_.issue.copy(flat + bucket.bucket.offsets[i], ctx_.grad(param), ctx_.layout[param].bytes(),
                      cudaMemcpyDeviceToDevice, ctx_.compute);
    }
    // In place: this rank's shard of the sum is written where its own shard was.
    FT_COLLECTIVE(ctx_.issue, ncclReduceScatter(flat, flat + bucket.shardOffset(ctx_.rank), bucket.shard_numel,
                                                ncclFloat, ncclAvg, comm_, ctx_.compute));
  }
}

void ShardedOptimizer::stepShard() {
  for (std::size_t i = 0; i < step_lists_.size(); ++i) {
    FT_KERNEL(ctx_.issue, kernels::multiTensorSgd(ctx_.compute, 12 * step_plan_[i].elements, step_lists_[i],
                                                  SgdFunctor{ctx_.options.lr}));
  }
}

void ShardedOptimizer::gatherParameters() {
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    const ShardedBucket& bucket = buckets_[b];
    float* flat = param_buckets_[b].get();
    FT_COLLECTIVE(ctx_.issue, ncclAllGather(flat + bucket.shardOffset(ctx_.rank), flat, bucket.shard_numel, ncclFloat,
                                            comm_, ctx_.compute));
    for (std::size_t i = 0; i < bucket.bucket.params.size(); ++i) {
      const int param = bucket.bucket.params[i];
      ctx_.issue.copy(ctx_.param(param), flat + bucket.bucket.offsets[i], ctx_.layout[param].bytes(),
                      cudaMemcpyDeviceToDevice, ctx_.compute);
    }
  }
}

}  // namespace framework_trainer
