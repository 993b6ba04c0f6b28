// ZeRO stage 3 as a first hand-written version of PyTorch FSDP (FULL_SHARD) does it, everything
// on the compute stream. Between uses each rank keeps only its shard of every unit's flat
// parameters (fsdp_units.hpp), persistent, and its shard of the unit's averaged gradients.
// - Forward of unit u: u's parameters are all-gathered from the shards into a buffer of the
//   caching allocator and the model's tensors of u are bound to it (model_tensors.hpp); the
//   all-gather of unit u + 1 is issued before u's kernels (forward_prefetch=True); after u's
//   kernels the buffer goes back to the allocator (reshard_after_forward), except the root's,
//   which backward uses first (FSDP does not reshard the root after forward).
// - Backward of unit u (in reverse order, on the backward thread): u's parameters gathered
//   again, the next unit in backward order's gather issued before u's kernels
//   (backward_prefetch=BACKWARD_PRE), u's full gradients written into a flat buffer of the
//   caching allocator; then the gathered parameters freed, the gradients reduce-scattered
//   (average) into this rank's gradient shard, and their buffer freed.
// - The step: SGD over this rank's parameter shards with its gradient shards, multi-tensor
//   apply as zero1's.
// With --fsdp-streams, as PyTorch FSDP (FULL_SHARD, torch.distributed.fsdp) issues the same work:
// - every all-gather on an unshard stream, into a buffer allocated for that stream; the
//   compute stream waits for the unshard stream before a unit's kernels, and the unshard stream
//   for the compute stream at the root's forward (the step's updated shards);
// - the next unit's all-gather issued before this unit's forward kernels with forward_prefetch,
//   else when the next unit's forward starts; in backward before this unit's gradient kernels
//   (backward_prefetch pre), after them and before its reduce-scatter (post), or when the next
//   unit's backward starts (none);
// - each reduce-scatter on a post-backward stream that first waits for the compute stream; the
//   compute stream waits for it at the end of backward (FSDP's final callback);
// - a buffer used on a stream other than its own freed as record_stream frees it: reused only
//   once that stream's work queued so far has run;
// - limit_all_gathers: each freeing of gathered parameters records an event on the compute
//   stream; before an all-gather, while two are outstanding, the host waits for the oldest.
#pragma once

#include "sgd_step.hpp"
#include "step_context.hpp"
#include "unit_hooks.hpp"

#include "framework_trainer/tensor_lists.hpp"
#include "framework_trainer/zero_shards.hpp"

#include "sample_common/cuda_resources.hpp"

#include <nccl.h>

#include <deque>
#include <optional>
#include <vector>

namespace framework_trainer {

class FullyShardedUnits final : public UnitHooks {
 public:
  // The shards of every unit, allocated; `tensors` is the table the step's kernels read,
  // unbound between uses (ModelTensors::unbound).
  FullyShardedUnits(const StepContext& ctx, ModelTensors& tensors, ncclComm_t comm);

  const std::vector<ShardedBucket>& units() const { return units_; }

  // Set-up, as FSDP wraps a model that is whole on every rank: materialise() gives every unit a
  // full, zeroed buffer and binds the tensors to it, for the weights to be initialised and
  // broadcast there; shard() keeps this rank's shard of each and frees the full buffers.
  void materialise();
  void shard();

  void beforeForward(int unit) override;
  void afterForward(int unit) override;
  void beforeBackward(int unit) override;
  void afterBackward(int unit) override;

  // SGD on this rank's shard of every unit.
  void stepShards();

  // Every unit's updated parameters, all-gathered from the shards into `full` (a padded
  // buffer per unit) on `stream` with `comm`: what the check hashes and probes.
  void gatherInto(const std::vector<DeviceTensor<float>>& full, ncclComm_t comm, cudaStream_t stream);

 private:
  // PyTorch FSDP's streams and the events between them (--fsdp-streams).
  struct FsdpStreams {
    sample_common::Stream unshard, post_backward;
    sample_common::Event unshard_issued, compute_issued, reduce_issued;
    std::deque<sample_common::Event> outstanding_frees;  // limit_all_gathers
    std::vector<sample_common::Event> spare_events;
  };

  // Gathers `unit`'s parameters unless they are gathered already.
  void gather(int unit);
  // Gathers `unit` ahead of its use, where it is a unit.
  void prefetch(int unit);
  void releaseParameters(int unit);
  // `waiting` waits for the work issued to `issued` so far, through `event`.
  static void waitFor(cudaStream_t waiting, cudaStream_t issued, const sample_common::Event& event);
  // The unit after `unit` in backward order (the root's is the last block's), or -1.
  int nextInBackward(int unit) const;
  // limit_all_gathers: while two freeings are outstanding, the host waits for the oldest.
  void limitAllGathers();
  void recordFree();

  const StepContext& ctx_;
  ModelTensors& tensors_;
  ncclComm_t comm_;
  std::vector<ShardedBucket> units_;
  std::vector<DeviceTensor<float>> param_shards_, grad_shards_;  // persistent
  std::vector<DeviceTensor<float>> gathered_, full_grads_;       // while a unit is in use
  SgdStep step_;
  std::optional<FsdpStreams> streams_;
};

}  // namespace framework_trainer
