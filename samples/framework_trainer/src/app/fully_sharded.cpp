#include "fully_sharded.hpp"

#include "framework_trainer/fsdp_units.hpp"

namespace framework_trainer {

FullyShardedUnits::FullyShardedUnits(const StepContext& ctx, ModelTensors& tensors, ncclComm_t comm)
    : ctx_(ctx),
      tensors_(tensors),
      comm_(comm),
      units_(fsdpUnits(ctx.config(), ctx.world_size)),
      gathered_(units_.size()),
      full_grads_(units_.size()) {
  std::vector<const void*> params, grads;
  for (const ShardedBucket& u : units_) {
    const auto numel = static_cast<std::int64_t>(u.shard_numel);
    params.push_back(param_shards_.emplace_back(ctx.allocator, numel, ctx.compute).get());
    grads.push_back(grad_shards_.emplace_back(ctx.allocator, numel, ctx.compute).get());
  }
  step_ = SgdStep(params, grads, shardNumels(units_));
}

void FullyShardedUnits::materialise() {
  for (std::size_t u = 0; u < units_.size(); ++u) {
    gathered_[u] = ctx_.activation(static_cast<std::int64_t>(units_[u].padded_numel));
    // The padding must stay finite: the step and the collectives cover it with the rest.
    ctx_.issue.memset(gathered_[u].get(), gathered_[u].bytes(), ctx_.compute);
    tensors_.viewParams(units_[u].bucket, gathered_[u].get());
  }
}

void FullyShardedUnits::shard() {
  for (std::size_t u = 0; u < units_.size(); ++u) {
    ctx_.issue.copy(param_shards_[u].get(), gathered_[u].get() + units_[u].shardOffset(ctx_.rank),
                    param_shards_[u].bytes(), cudaMemcpyDeviceToDevice, ctx_.compute);
    releaseParameters(static_cast<int>(u));
  }
}

void FullyShardedUnits::gather(int unit) {
  const auto u = static_cast<std::size_t>(unit);
  if (gathered_[u].get() != nullptr) return;
  gathered_[u] = ctx_.activation(static_cast<std::int64_t>(units_[u].padded_numel));
  FT_COLLECTIVE(ctx_.issue, ncclAllGather(param_shards_[u].get(), gathered_[u].get(), units_[u].shard_numel, ncclFloat,
                                          comm_, ctx_.compute));
  tensors_.viewParams(units_[u].bucket, gathered_[u].get());
}

void FullyShardedUnits::releaseParameters(int unit) {
  const auto u = static_cast<std::size_t>(unit);
  tensors_.viewParams(units_[u].bucket, nullptr);
  // Back to the allocator's free list for the compute stream: the kernels queued on it that
  // read the buffer run before anything queued later can reuse it.
  gathered_[u] = DeviceTensor<float>();
}

void FullyShardedUnits::beforeForward(int unit) {
  gather(unit);
  if (unit + 1 < static_cast<int>(units_.size())) gather(unit + 1);
}

void FullyShardedUnits::afterForward(int unit) {
  if (unit != kRootUnit) releaseParameters(unit);
}

void FullyShardedUnits::beforeBackward(int unit) {
  const auto u = static_cast<std::size_t>(unit);
  gather(unit);
  // The next unit in backward order: the last block's after the root's (whose backward starts
  // with the loss), then the blocks in reverse; the root is still gathered when the embeddings'
  // turn comes.
  const int next = unit == kRootUnit ? static_cast<int>(units_.size()) - 1 : unit - 1;
  if (next > kRootUnit) gather(next);
  full_grads_[u] = ctx_.activation(static_cast<std::int64_t>(units_[u].padded_numel));
  // Backward writes every element of every gradient (backward.hpp), never the padding: zeroed,
  // so that it averages to zero in the shard that holds it.
  const std::size_t padding = units_[u].padded_numel - units_[u].bucket.numel;
  if (padding > 0) {
    ctx_.issue.memset(full_grads_[u].get() + units_[u].bucket.numel, padding * sizeof(float), ctx_.compute);
  }
  tensors_.viewGrads(units_[u].bucket, full_grads_[u].get());
}

void FullyShardedUnits::afterBackward(int unit) {
  const auto u = static_cast<std::size_t>(unit);
  releaseParameters(unit);
  FT_COLLECTIVE(ctx_.issue, ncclReduceScatter(full_grads_[u].get(), grad_shards_[u].get(), units_[u].shard_numel,
                                              ncclFloat, ncclAvg, comm_, ctx_.compute));
  tensors_.viewGrads(units_[u].bucket, nullptr);
  full_grads_[u] = DeviceTensor<float>();
}

void FullyShardedUnits::stepShards() { step_.issue(ctx_.issue, ctx_.compute, ctx_.options.lr); }

void FullyShardedUnits::gatherInto(const std::vector<DeviceTensor<float>>& full, ncclComm_t comm, cudaStream_t stream) {
  for (std::size_t u = 0; u < units_.size(); ++u) {
    FT_COLLECTIVE(ctx_.issue,
                  ncclAllGather(param_shards_[u].get(), full[u].get(), units_[u].shard_numel, ncclFloat, comm, stream));
  }
}

}  // namespace framework_trainer
