// ZeRO stage 1 over the flat buckets the model's parameters and gradients are views into
// (framework_trainer/zero_shards.hpp, model_tensors.hpp), so that nothing is copied: each
// gradient bucket is reduce-scattered in place; the SGD step updates only this rank's shard of
// each parameter bucket (multi-tensor apply over the shards), from the averaged shard the
// reduce-scatter left; each parameter bucket is all-gathered in place, where the next forward
// reads it. The reduce-scatters run either
// - after backward, on the compute stream, as a first hand-written version does; or
// - overlapping backward (--overlap-grad-reduce), as Megatron-LM's distributed optimizer with
//   --overlap-grad-reduce and DeepSpeed's ZeRO with overlap_comm run them: as soon as backward
//   has written a bucket's last gradient, that bucket's reduce-scatter is issued on a stream of
//   its own after an event on the compute stream, buckets in order; before the step the compute
//   stream waits for them all (Megatron's finish_grad_sync).
// The all-gathers run either after the step on the compute stream, or overlapping the next
// forward (--overlap-param-gather), as Megatron-LM's --overlap-param-gather runs them: on the
// stream of their own, after the step, buckets in the order forward first reads them, and the
// compute stream waits for a bucket just before the first kernel that reads one of its
// parameters (Megatron's forward pre-hooks). Megatron issues each all-gather when forward
// reaches the bucket before it; here all are issued after the step, which the GPU runs the same
// way while the host is ahead of it: one after another on their stream, first needed first.
// The collectives that do not overlap go on the compute stream, or (--process-group-stream) as
// torch.distributed issues a synchronous one: an event on the compute stream, the process
// group's stream (the one above) waiting for it, the collective there, an event there, and the
// compute stream waiting for that at once.
#pragma once

#include "bucket_launcher.hpp"
#include "sgd_step.hpp"
#include "step_context.hpp"

#include "framework_trainer/tensor_lists.hpp"
#include "sample_common/cuda_resources.hpp"

#include <nccl.h>

#include <vector>

namespace framework_trainer {

class ShardedOptimizer {
 public:
  // The step's lists over this rank's shards of `ctx.tensors`' buckets; with
  // ctx.options.overlap_grad_reduce the reduce-scatters, with overlap_param_gather the
  // all-gathers, go to `comm_stream`.
  ShardedOptimizer(const StepContext& ctx, ncclComm_t comm, cudaStream_t comm_stream);

  int buckets() const { return static_cast<int>(ctx_.tensors.buckets().size()); }
  bool overlapsBackward() const { return ctx_.options.overlap_grad_reduce; }
  bool overlapsForward() const { return ctx_.options.overlap_param_gather; }

  // Overlapping: called by backward (on its thread) when a parameter's gradient is final.
  void gradReady(int param);
  // After backward: a reduce-scatter (average) per gradient bucket, in place, on the compute
  // stream; overlapping, the compute stream's wait for the reduce-scatters already issued.
  // Throws if, overlapping, a bucket's gradients never became ready.
  void synchronizeGradients();
  // SGD on this rank's shard of every parameter bucket.
  void stepShard();
  // An all-gather per parameter bucket of the updated shards, in place.
  void gatherParameters();
  // Overlapping forward: before a kernel reads `param`, the compute stream waits for its
  // bucket's all-gather (once an iteration).
  void beforeParamRead(int param);
  // Makes `stream` wait for every all-gather not yet waited for on it (the step, on the compute
  // stream; the check, on its own): nothing when they run on the compute stream.
  void waitForGathers(cudaStream_t stream);

 private:
  void reduceScatter(const FlatBucket& bucket, cudaStream_t stream);
  // Issues `collective(stream)` in line: on the compute stream, or through the process group's.
  template <class Collective>
  void inLine(Collective&& collective);

  const StepContext& ctx_;
  ncclComm_t comm_;
  cudaStream_t comm_stream_;
  SgdStep step_;
  // Overlapping: each parameter's bucket, and the buckets' reduce-scatters launched in order.
  std::vector<int> bucket_of_;
  BucketLauncher launcher_;
  // Overlapping forward: the buckets in the order forward first reads them, the step's end,
  // each bucket's gather, and whether the compute stream still has to wait for it.
  std::vector<std::size_t> need_order_;
  sample_common::Event stepped_;
  std::vector<sample_common::Event> gathered_;
  std::vector<bool> awaiting_;
  sample_common::Event group_ready_, group_done_;  // --process-group-stream
};

}  // namespace framework_trainer
