#include "reducer.hpp"

#include <fmt/format.h>

namespace framework_trainer {

Reducer::Reducer(const StepContext& ctx, ncclComm_t comm, cudaStream_t nccl_stream)
    : ctx_(ctx), comm_(comm), nccl_stream_(nccl_stream), slots_(static_cast<std::size_t>(ctx.layout.size())) {
  std::vector<Bucket> assignment = modelBuckets(ctx.layout, {ctx.options.bucketBytes()});
  buckets_.reserve(assignment.size());
  for (std::size_t b = 0; b < assignment.size(); ++b) {
    BucketState& state = buckets_.emplace_back();
    state.assignment = std::move(assignment[b]);
    // Flat buffers of the caching allocator, used by the compute stream (the copies); the NCCL
    // stream reaches them only after waiting for the compute stream's event.
    state.buffer = DeviceTensor<float>(ctx.allocator, static_cast<std::int64_t>(state.assignment.numel), ctx.compute);
    for (std::size_t i = 0; i < state.assignment.params.size(); ++i) {
      slots_[static_cast<std::size_t>(state.assignment.params[i])] = {static_cast<int>(b), state.assignment.offsets[i]};
    }
    state.pending = state.assignment.params.size();
  }
}

void Reducer::gradReady(int param) {
  const Slot& slot = slots_[static_cast<std::size_t>(param)];
  BucketState& bucket = buckets_[static_cast<std::size_t>(slot.bucket)];
  if (bucket.pending == 0) {
    throw std::logic_error(fmt::format("{}'s gradient was made ready twice in one backward", ctx_.layout[param].name));
  }
  ctx_.issue.copy(bucket.buffer.get() + slot.offset, ctx_.grad(param), ctx_.layout[param].bytes(),
                  cudaMemcpyDeviceToDevice, ctx_.compute);
  --bucket.pending;
  launchReadyBuckets();
}

void Reducer::launchReadyBuckets() {
  while (next_to_launch_ < buckets_.size() && buckets_[next_to_launch_].pending == 0) {
    BucketState& bucket = buckets_[next_to_launch_++];
    SAMPLE_CUDA(cudaEventRecord(bucket.ready.get(), ctx_.compute));
    SAMPLE_CUDA(cudaStreamWaitEvent(nccl_stream_, bucket.ready.get(), 0));
    ctx_.issue.allReduce(bucket.buffer.get(), bucket.assignment.numel, comm_, nccl_stream_);
    SAMPLE_CUDA(cudaEventRecord(bucket.done.get(), nccl_stream_));
  }
}

void Reducer::finalize() {
  if (next_to_launch_ != buckets_.size()) {
    throw std::logic_error(fmt::format("backward left bucket {} of {} with gradients not ready", next_to_launch_,
                                       buckets_.size()));
  }
  for (BucketState& bucket : buckets_) {
    SAMPLE_CUDA(cudaStreamWaitEvent(ctx_.compute, bucket.done.get(), 0));
    for (std::size_t i = 0; i < bucket.assignment.params.size(); ++i) {
      const int param = bucket.assignment.params[i];
      ctx_.issue.copy(ctx_.grad(param), bucket.buffer.get() + bucket.assignment.offsets[i], ctx_.layout[param].bytes(),
                      cudaMemcpyDeviceToDevice, ctx_.compute);
    }
    bucket.pending = bucket.assignment.params.size();
  }
  next_to_launch_ = 0;
}

}  // namespace framework_trainer
