#include "fully_sharded.hpp"

#include "framework_trainer/fsdp_units.hpp"
#include "sample_common/cuda_check.hpp"
#include "sample_common/nvtx_range.hpp"

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
  if (ctx.options.fsdp_streams) streams_.emplace();
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

void FullyShardedUnits::waitFor(cudaStream_t waiting, cudaStream_t issued, const sample_common::Event& event) {
  SAMPLE_CUDA(cudaEventRecord(event.get(), issued));
  SAMPLE_CUDA(cudaStreamWaitEvent(waiting, event.get(), 0));
}

int FullyShardedUnits::nextInBackward(int unit) const {
  // The last block's after the root's (whose backward starts with the loss), then the blocks in
  // reverse; the root is still gathered when the embeddings' turn comes.
  const int next = unit == kRootUnit ? static_cast<int>(units_.size()) - 1 : unit - 1;
  return next > kRootUnit ? next : -1;
}

void FullyShardedUnits::limitAllGathers() {
  std::deque<sample_common::Event>& outstanding = streams_->outstanding_frees;
  // FSDP's _FreeEventQueue: at most two all-gathers' worth of parameters in flight.
  if (outstanding.size() < 2) return;
  const sample_common::NvtxRange range("FullyShardedDataParallel.rate_limiter");
  SAMPLE_CUDA(cudaEventSynchronize(outstanding.front().get()));
  streams_->spare_events.push_back(std::move(outstanding.front()));
  outstanding.pop_front();
}

void FullyShardedUnits::recordFree() {
  std::vector<sample_common::Event>& spare = streams_->spare_events;
  if (spare.empty()) spare.emplace_back();
  SAMPLE_CUDA(cudaEventRecord(spare.back().get(), ctx_.compute));
  streams_->outstanding_frees.push_back(std::move(spare.back()));
  spare.pop_back();
}

void FullyShardedUnits::gather(int unit) {
  const auto u = static_cast<std::size_t>(unit);
  if (gathered_[u].get() != nullptr) return;
  cudaStream_t stream = ctx_.compute;
  if (streams_) {
    if (ctx_.options.limit_all_gathers) limitAllGathers();
    stream = streams_->unshard.get();
  }
  gathered_[u] = DeviceTensor<float>(ctx_.allocator, static_cast<std::int64_t>(units_[u].padded_numel), stream);
  FT_COLLECTIVE(ctx_.issue, ncclAllGather(param_shards_[u].get(), gathered_[u].get(), units_[u].shard_numel, ncclFloat,
                                          comm_, stream));
  tensors_.viewParams(units_[u].bucket, gathered_[u].get());
}

void FullyShardedUnits::prefetch(int unit) {
  if (unit >= 0 && unit < static_cast<int>(units_.size())) gather(unit);
}

void FullyShardedUnits::releaseParameters(int unit) {
  const auto u = static_cast<std::size_t>(unit);
  tensors_.viewParams(units_[u].bucket, nullptr);
  if (!streams_) {
    // Back to the allocator's free list for the compute stream: the kernels queued on it that
    // read the buffer run before anything queued later can reuse it.
    gathered_[u] = DeviceTensor<float>();
    return;
  }
  // The buffer is the unshard stream's and the compute stream reads it: record_stream.
  gathered_[u].releaseAfterWorkOn(ctx_.compute);
  if (ctx_.options.limit_all_gathers) recordFree();
}

void FullyShardedUnits::beforeForward(int unit) {
  if (!streams_) {
    gather(unit);
    prefetch(unit + 1);
    return;
  }
  // FSDP's hooks run inside ranges of these names (torch.profiler.record_function), which a
  // trace shows.
  const sample_common::NvtxRange range("FullyShardedDataParallel._pre_forward");
  // The root's pre-forward: the unshard stream must not read the shards before the step wrote them.
  if (unit == kRootUnit) waitFor(streams_->unshard.get(), ctx_.compute, streams_->compute_issued);
  gather(unit);
  waitFor(ctx_.compute, streams_->unshard.get(), streams_->unshard_issued);
  if (ctx_.options.forward_prefetch) prefetch(unit + 1);
}

void FullyShardedUnits::afterForward(int unit) {
  if (unit != kRootUnit) releaseParameters(unit);
}

void FullyShardedUnits::beforeBackward(int unit) {
  const auto u = static_cast<std::size_t>(unit);
  gather(unit);
  if (!streams_) {
    prefetch(nextInBackward(unit));
  } else {
    const sample_common::NvtxRange range("FullyShardedDataParallel._pre_backward_hook");
    waitFor(ctx_.compute, streams_->unshard.get(), streams_->unshard_issued);
    if (ctx_.options.backward_prefetch == BackwardPrefetch::Pre) prefetch(nextInBackward(unit));
  }
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
  tensors_.viewGrads(units_[u].bucket, nullptr);
  if (!streams_) {
    FT_COLLECTIVE(ctx_.issue, ncclReduceScatter(full_grads_[u].get(), grad_shards_[u].get(), units_[u].shard_numel,
                                                ncclFloat, ncclAvg, comm_, ctx_.compute));
    full_grads_[u] = DeviceTensor<float>();
    return;
  }
  const sample_common::NvtxRange range("FullyShardedDataParallel._post_backward_hook");
  // The root's post-backward comes last, when every unit's backward is done.
  if (ctx_.options.backward_prefetch == BackwardPrefetch::Post && unit != kRootUnit) prefetch(nextInBackward(unit));
  cudaStream_t post_backward = streams_->post_backward.get();
  waitFor(post_backward, ctx_.compute, streams_->compute_issued);
  FT_COLLECTIVE(ctx_.issue, ncclReduceScatter(full_grads_[u].get(), grad_shards_[u].get(), units_[u].shard_numel,
                                              ncclFloat, ncclAvg, comm_, post_backward));
  full_grads_[u].releaseAfterWorkOn(post_backward);
  // FSDP's final callback: the step reads the gradient shards the reduce-scatters write.
  if (unit == kRootUnit) waitFor(ctx_.compute, post_backward, streams_->reduce_issued);
}

void FullyShardedUnits::stepShards() { step_.issue(ctx_.issue, ctx_.compute, ctx_.options.lr); }

void FullyShardedUnits::gatherInto(const std::vector<DeviceTensor<float>>& full, ncclComm_t comm, cudaStream_t stream) {
  for (std::size_t u = 0; u < units_.size(); ++u) {
    FT_COLLECTIVE(ctx_.issue,
                  ncclAllGather(param_shards_[u].get(), full[u].get(), units_[u].shard_numel, ncclFloat, comm, stream));
  }
}

}  // namespace framework_trainer
