#include "sharded_optimizer.hpp"

#include <algorithm>

namespace framework_trainer {

namespace {

std::vector<std::size_t> gradientsPerBucket(const std::vector<FlatBucket>& buckets) {
  std::vector<std::size_t> out;
  for (const FlatBucket& b : buckets) out.push_back(b.layout.bucket.params.size());
  return out;
}

}  // namespace

ShardedOptimizer::ShardedOptimizer(const StepContext& ctx, ncclComm_t comm, cudaStream_t comm_stream)
    : ctx_(ctx),
      comm_(comm),
      comm_stream_(comm_stream),
      bucket_of_(static_cast<std::size_t>(ctx.layout.size()), -1),
      launcher_(gradientsPerBucket(ctx.tensors.buckets())) {
  std::vector<const void*> params, grads;
  std::vector<std::int64_t> numels;
  const std::vector<FlatBucket>& buckets = ctx.tensors.buckets();
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    params.push_back(buckets[b].params.get() + buckets[b].layout.shardOffset(ctx.rank));
    grads.push_back(buckets[b].grads.get() + buckets[b].layout.shardOffset(ctx.rank));
    numels.push_back(static_cast<std::int64_t>(buckets[b].layout.shard_numel));
    for (int p : buckets[b].layout.bucket.params) bucket_of_[static_cast<std::size_t>(p)] = static_cast<int>(b);
    gathered_.emplace_back();
    need_order_.push_back(b);
  }
  awaiting_.assign(buckets.size(), false);
  step_ = SgdStep(params, grads, numels);
  // Forward reads the parameters in the order the model registers them (the embeddings first),
  // and the buckets hold them in reverse: a bucket is first needed by its first parameter.
  const auto first_param = [&](std::size_t b) {
    const std::vector<int>& ps = buckets[b].layout.bucket.params;
    return *std::min_element(ps.begin(), ps.end());
  };
  std::sort(need_order_.begin(), need_order_.end(),
            [&](std::size_t a, std::size_t b) { return first_param(a) < first_param(b); });
}

void ShardedOptimizer::reduceScatter(const FlatBucket& b, cudaStream_t stream) {
  // In place: this rank's shard of the average is written where its own shard was. The rest of
  // the bucket keeps this rank's own gradients: no zero_grad is needed before the next backward,
  // which writes every element of every gradient (backward.hpp: the first contribution is an
  // assignment, only the tied embedding's second adds to it), and never the padding, which stays
  // zero as the average of zeros. Zeroing the buckets every iteration, as frameworks whose
  // backward accumulates into main_grad must, would only add a pass over the gradients.
  FT_COLLECTIVE(ctx_.issue, ncclReduceScatter(b.grads.get(), b.grads.get() + b.layout.shardOffset(ctx_.rank),
                                              b.layout.shard_numel, ncclFloat, ncclAvg, comm_, stream));
}

template <class Collective>
void ShardedOptimizer::inLine(Collective&& collective) {
  if (!ctx_.options.process_group_stream) {
    collective(ctx_.compute);
    return;
  }
  SAMPLE_CUDA(cudaEventRecord(group_ready_.get(), ctx_.compute));
  SAMPLE_CUDA(cudaStreamWaitEvent(comm_stream_, group_ready_.get(), 0));
  collective(comm_stream_);
  SAMPLE_CUDA(cudaEventRecord(group_done_.get(), comm_stream_));
  SAMPLE_CUDA(cudaStreamWaitEvent(ctx_.compute, group_done_.get(), 0));
}

void ShardedOptimizer::gradReady(int param) {
  // Buckets are reduced in order, as Megatron's are: backward fills them in order anyway.
  const auto b = static_cast<std::size_t>(bucket_of_[static_cast<std::size_t>(param)]);
  launcher_.gradientIn(b, ctx_.layout[param].name, ctx_.compute, comm_stream_, [&](std::size_t k, cudaStream_t stream) {
    reduceScatter(ctx_.tensors.buckets()[k], stream);
  });
}

void ShardedOptimizer::synchronizeGradients() {
  if (overlapsBackward()) {
    launcher_.finish(ctx_.compute, [](std::size_t) {});
    return;
  }
  for (const FlatBucket& b : ctx_.tensors.buckets()) inLine([&](cudaStream_t stream) { reduceScatter(b, stream); });
}

void ShardedOptimizer::stepShard() { step_.issue(ctx_.issue, ctx_.compute, ctx_.options.lr); }

void ShardedOptimizer::gatherParameters() {
  const std::vector<FlatBucket>& buckets = ctx_.tensors.buckets();
  // In place, from this rank's shard: every rank's updated shard lands in its place.
  const auto gather = [&](const FlatBucket& b, cudaStream_t stream) {
    FT_COLLECTIVE(ctx_.issue, ncclAllGather(b.params.get() + b.layout.shardOffset(ctx_.rank), b.params.get(),
                                            b.layout.shard_numel, ncclFloat, comm_, stream));
  };
  if (!overlapsForward()) {
    for (const FlatBucket& b : buckets) inLine([&](cudaStream_t stream) { gather(b, stream); });
    return;
  }
  SAMPLE_CUDA(cudaEventRecord(stepped_.get(), ctx_.compute));
  SAMPLE_CUDA(cudaStreamWaitEvent(comm_stream_, stepped_.get(), 0));
  for (std::size_t b : need_order_) {
    gather(buckets[b], comm_stream_);
    SAMPLE_CUDA(cudaEventRecord(gathered_[b].get(), comm_stream_));
    awaiting_[b] = true;
  }
}

void ShardedOptimizer::beforeParamRead(int param) {
  const auto b = static_cast<std::size_t>(bucket_of_[static_cast<std::size_t>(param)]);
  if (!awaiting_[b]) return;
  SAMPLE_CUDA(cudaStreamWaitEvent(ctx_.compute, gathered_[b].get(), 0));
  awaiting_[b] = false;
}

void ShardedOptimizer::waitForGathers(cudaStream_t stream) {
  if (!overlapsForward()) return;
  for (std::size_t b = 0; b < gathered_.size(); ++b) {
    if (stream == ctx_.compute && !awaiting_[b]) continue;
    SAMPLE_CUDA(cudaStreamWaitEvent(stream, gathered_[b].get(), 0));
    if (stream == ctx_.compute) awaiting_[b] = false;
  }
}

}  // namespace framework_trainer
