// A sharded optimizer's bucket size (Megatron-LM's --ddp-bucket-size, DeepSpeed's
// reduce_bucket_size and allgather_bucket_size): the calls the same job would make with another
// (docs/tuner.md, "Sharded optimizers: bucket size").
//
// Megatron-LM's distributed optimizer keeps its gradients and parameters in flat buckets, the
// model's parameters in reverse order, a bucket closing once it holds the bucket size in
// elements or more; it reduce-scatters each gradient bucket and all-gathers each parameter
// bucket. What a run shows of that layout, with no framework's help:
//   - the buckets: the optimizer's reduce-scatters (their input) and all-gathers (their result),
//     on its data-parallel communicator (sharded_overlap.hpp), in one modelled step;
//   - the tensors in them: where kernels' pointer arguments, and copies and fills, point inside
//     a bucket in that step before its last reduce-scatter (backward writing the gradients,
//     forward and backward reading the parameters gathered the step before). A tensor runs from where one points to the
//     next such place, the last to the bucket's end (its padding with it); a tensor no call
//     points at stays part of the one before it;
//   - the order the framework lays them out in (the order a new size cuts them in): the
//     reduce-scatters' order for the gradient buckets (buckets are reduced in order), and for
//     the parameter buckets the all-gathers' order when issued in line, else the reverse of the
//     order that step's forward first reads them in (forward reads the parameters in the order
//     the buckets hold them reversed).
// With another size, the same tensors cut into other buckets are reduced and gathered as the
// recorded ones were:
//   - in line (sharded_overlap.hpp's Placement::InLine), or waited for at once (PyTorch's
//     synchronous collectives, two buckets or more: with one, overlapped and synchronous look
//     alike): the new collectives where the first recorded one was, in layout order, on its
//     stream (each recorded one's events and waits stay where they were, so everything waited
//     for the block waits for the new one);
//   - reduce-scatters overlapped: each new bucket's block (an event on the compute stream, the
//     communication stream waiting for it, the reduce-scatter, an event on the communication
//     stream) right after the call that last wrote one of its gradients, buckets in order, and
//     each stream's wait for it where that stream first waited for a recorded bucket holding
//     one of its gradients (or a later bucket: they run in order), or right after it where that
//     was earlier;
//   - all-gathers overlapped: the new all-gathers, each followed by an event, where the first
//     recorded one was (after the step's event the communication stream waited for), first
//     needed first, and the compute stream's wait for each just before the first call that
//     reads one of its parameters (where the recorded waits' first was, when none does).
// A step whose all-gathers come before its first reduce-scatter (the last step's parameters
// gathered in this step's forward, from Megatron-LM's forward pre-hooks) has those gathers
// rewritten as overlapped ones (they are where the first recorded one was, after the compute
// stream's event its stream waited for); one that gathers between its reduce-scatters (fully
// sharded), or both before and after them, is not rewritten. A size with overlap_grad_reduce turned on is this rewrite of the run that
// setting's prediction models (tune.cpp). A new collective's time is the communicator's fit of time on size;
// it keeps the recorded ones' arguments but its count and buffers (the new bucket's, this rank's
// shard at the same place among the shards when the recorded one was in place), and takes no
// host time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "syncopate/trace/status.hpp"
#include "syncopate/tuner/recorded_calls.hpp"
#include "syncopate/tuner/sharded_overlap.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace syncopate::tuner {

// The setting's name in reports (Megatron-LM's DistributedDataParallelConfig.bucket_size).
inline constexpr const char* kShardedBucketSize = "bucket_size";

// The line to change for a bucket size of `elements` in `framework` ("Megatron-LM", "DeepSpeed",
// or empty when the run names neither: each framework's, and what an optimizer of one's own does),
// with the settings `overlaps` names turned on as well (DeepSpeed has no overlap of the
// parameters' gathering: a size with it is put in the other words, Megatron-LM's and one's own).
std::string shardedBucketSizeHowTo(std::uint64_t elements, const std::string& framework,
                                   ShardedOverlaps overlaps = {});

// One flat bucket of a rank: where its buffer starts, its padded size, and where its tensors
// start in it (offsets, ascending; the first is 0).
struct FlatBucketLayout {
  std::uint64_t base = 0;
  std::uint64_t bytes = 0;
  std::vector<std::uint64_t> tensor_offsets;
};

struct ShardedLayout {
  bool found = false;
  std::string why_not;  // when not found, in one sentence
  // Each kind's elements (the collectives' data types: Megatron-LM reduces bf16 models' gradients
  // in fp32 and gathers their parameters in bf16; a size counts elements of either).
  std::uint64_t gradient_element_bytes = 4, parameter_element_bytes = 4;
  // Per rank row, the gradient and the parameter buckets in layout order. Parameters are empty
  // when the run gathers none after its reduce-scatters.
  std::vector<std::vector<FlatBucketLayout>> gradients, parameters;

  // Rank row 0's tensors in layout order, their bytes; and the bucket each was recorded in.
  std::vector<std::uint64_t> tensorBytes(bool params) const;
  std::vector<std::size_t> recordedBucketOf(bool params) const;
};

// The layout of `optimizer`'s buckets on every rank, from the model's first modelled step. Fails
// (found false, why_not) where a bucket has no tensor a call points at, or the ranks' layouts
// differ in their tensors' sizes.
ShardedLayout findShardedLayout(const WhatIfModel& model, const ShardedOptimizerRun& optimizer);

// The bucket of each tensor (bytes, in layout order) with a bucket size of `elements`: a bucket
// closes once it holds that many elements or more.
std::vector<std::size_t> shardedBucketOf(const std::vector<std::uint64_t>& tensor_bytes, std::uint64_t element_bytes,
                                         std::uint64_t elements);

// The model's calls with the tensors reduced in the buckets `reduce_bucket_of` says and gathered
// in those `gather_bucket_of` says (each indexed by tensor in layout order, as tensorBytes), in
// every modelled step (above). Fails, in a sentence, where a step's collectives are not issued
// as the layout's were.
trace::Result<RecordedRun> rebucketSharded(const WhatIfModel& model, const ShardedOptimizerRun& optimizer,
                                           const ShardedLayout& layout, const std::vector<std::size_t>& reduce_bucket_of,
                                           const std::vector<std::size_t>& gather_bucket_of);

}  // namespace syncopate::tuner
