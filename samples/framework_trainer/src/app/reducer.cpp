#include "reducer.hpp"

#include "kernels.hpp"

namespace framework_trainer {

namespace {

std::vector<std::size_t> gradientsPerBucket(const std::vector<Bucket>& assignment) {
  std::vector<std::size_t> out;
  for (const Bucket& b : assignment) out.push_back(b.params.size());
  return out;
}

}  // namespace

Reducer::Reducer(const StepContext& ctx, ncclComm_t comm, cudaStream_t nccl_stream)
    : Reducer(ctx, comm, nccl_stream, modelBuckets(ctx.layout, ctx.options.bucketSizing())) {}

Reducer::Reducer(const StepContext& ctx, ncclComm_t comm, cudaStream_t nccl_stream, std::vector<Bucket> assignment)
    : ctx_(ctx),
      comm_(comm),
      nccl_stream_(nccl_stream),
      slots_(static_cast<std::size_t>(ctx.layout.size())),
      launcher_(gradientsPerBucket(assignment)) {
  buckets_.reserve(assignment.size());
  for (std::size_t b = 0; b < assignment.size(); ++b) {
    BucketState& state = buckets_.emplace_back();
    state.assignment = std::move(assignment[b]);
    // Flat buffers of the caching allocator, used by the compute stream (the copies, or backward
    // writing the views); the NCCL stream reaches them only after waiting for the compute
    // stream's event.
    if (ctx.options.gradient_as_bucket_view) {
      state.flat = ctx.tensors.gradientBuckets().at(b).get();
    } else {
      state.copies = DeviceTensor<float>(ctx.allocator, static_cast<std::int64_t>(state.assignment.numel), ctx.compute);
      state.flat = state.copies.get();
    }
    for (std::size_t i = 0; i < state.assignment.params.size(); ++i) {
      slots_[static_cast<std::size_t>(state.assignment.params[i])] = {static_cast<int>(b), state.assignment.offsets[i]};
    }
  }
}

void Reducer::gradReady(int param) {
  const Slot& slot = slots_[static_cast<std::size_t>(param)];
  const BucketState& bucket = buckets_[static_cast<std::size_t>(slot.bucket)];
  // DDP (without a communication hook) divides each gradient by the world size as it puts it in
  // its bucket: at::mul_out into the bucket's view, or with gradient_as_bucket_view div_ in place
  // on the view backward wrote (the gradient is the view); the all-reduce then sums. Either way
  // an elementwise kernel reading and writing the gradient's bytes.
  const ParamSpec& p = ctx_.layout[param];
  FT_KERNEL(ctx_.issue, kernels::scale(ctx_.compute, static_cast<std::int64_t>(2 * p.bytes()), static_cast<int>(p.numel()),
                                       bucket.flat + slot.offset, ctx_.grad(param),
                                       1.0f / static_cast<float>(ctx_.world_size)));
  launcher_.gradientIn(static_cast<std::size_t>(slot.bucket), p.name, ctx_.compute, nccl_stream_,
                       [&](std::size_t b, cudaStream_t stream) {
                         ctx_.issue.allReduce(buckets_[b].flat, buckets_[b].assignment.numel, ncclSum, comm_, stream);
                       });
}

void Reducer::finalize() {
  launcher_.finish(ctx_.compute, [&](std::size_t b) {
    const BucketState& bucket = buckets_[b];
    if (ctx_.options.gradient_as_bucket_view) return;
    for (std::size_t i = 0; i < bucket.assignment.params.size(); ++i) {
      const int param = bucket.assignment.params[i];
      ctx_.issue.copy(ctx_.grad(param), bucket.flat + bucket.assignment.offsets[i], ctx_.layout[param].bytes(),
                      cudaMemcpyDeviceToDevice, ctx_.compute);
    }
  });
}

}  // namespace framework_trainer
