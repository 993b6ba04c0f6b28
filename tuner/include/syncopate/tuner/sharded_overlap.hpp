// A sharded optimizer (ZeRO stage 1/2: Megatron-LM's distributed optimizer, DeepSpeed) and the
// framework settings that overlap its collectives with compute (docs/tuner.md, "Sharded
// optimizers: overlapping reduction and gathering"):
//   - the gradients' reduce-scatters with backward: Megatron-LM's --overlap-grad-reduce,
//     DeepSpeed ZeRO stage 1/2's overlap_comm. Off, every gradient bucket is reduce-scattered
//     after backward, in line on the compute stream; on, each bucket's reduce-scatter is issued
//     on a stream of the framework's own as soon as backward has written the bucket, buckets in
//     order, and the optimizer waits for them all;
//   - the updated parameters' all-gathers with the next forward: Megatron-LM's
//     --overlap-param-gather. Off, every bucket is all-gathered after the step on the compute
//     stream; on, on a stream of its own, in the order forward first reads the buckets, forward
//     waiting for each just before it reads it.
// Each is a schedule the model already replays: those collectives on a communication stream,
// each starting when its producers end, in the program's order (reduce-scatters) or in the
// order their results are first read (all-gathers), each consumer waiting for its own bucket,
// and everything else where the program put it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "syncopate/tuner/schedule_rules.hpp"
#include "syncopate/tuner/search.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace syncopate::tuner {

enum class ShardedOverlap : std::uint8_t { GradReduce, ParamGather };

// Where a run issued the optimizer's collectives of one kind, against the stream of the work
// that produced their buffers (the compute stream):
//   InLine: on that stream (a hand-written optimizer, Megatron-LM and DeepSpeed without the
//     setting when they issue on the current stream);
//   WaitedAtOnce: on a stream of their own, but that stream's end waited for by the compute
//     stream before it is given any more work (PyTorch's synchronous collectives, async_op=False:
//     the process group's stream, then an event the current stream waits for at once);
//   Overlapped: on a stream of their own while the compute stream went on (the setting on).
enum class Placement : std::uint8_t { InLine, WaitedAtOnce, Overlapped };
const char* toString(Placement p);  // "in line", "waited at once", "overlapped"
// "overlap_grad_reduce", "overlap_param_gather": the settings' names in reports.
const char* settingName(ShardedOverlap which);

// Which of the two settings are on (a bucket size's prediction is made with those the tuner
// recommends turning on).
struct ShardedOverlaps {
  bool grad_reduce = false, param_gather = false;
  bool any() const { return grad_reduce || param_gather; }
  // As SettingPrediction::with says it: "overlap_grad_reduce=on, overlap_param_gather=on"; empty
  // for neither.
  std::string with() const;
  // The settings `with` names.
  static ShardedOverlaps namedIn(const std::string& with);
};

struct ShardedOptimizerRun {
  bool found = false;
  std::string why_not;                // when not found, in one sentence
  // The data-parallel communicator (CollectiveArgs::comm_index): the one whose reduce-scatters
  // move the most bytes a step. Other communicators' collectives (tensor or sequence
  // parallelism's) are not the optimizer's and stay where they are.
  std::uint32_t comm_index = 0;
  std::uint64_t comm = 0;  // its id (CollectiveArgs::comm), the same on every rank
  std::size_t reduce_scatters = 0;    // one step's gradient reduce-scatters (rank 0)
  std::uint64_t gradient_bytes = 0;   // what they reduce, in all
  std::size_t all_gathers = 0;        // one step's parameter all-gathers (rank 0)
  std::uint64_t parameter_bytes = 0;  // what they gather, in all
  Placement reduce_placement = Placement::InLine;
  Placement gather_placement = Placement::InLine;

  Placement placement(ShardedOverlap which) const {
    return which == ShardedOverlap::GradReduce ? reduce_placement : gather_placement;
  }
  // The setting on: the collectives ran while the compute stream went on.
  bool overlapped(ShardedOverlap which) const { return placement(which) == Placement::Overlapped; }
  // The setting's value as the run was recorded: "on" or "off".
  const char* recordedValue(ShardedOverlap which) const { return overlapped(which) ? "on" : "off"; }
};

// The run's sharded optimizer in the first modelled step of rank 0: its gradient reduce-scatters,
// and the all-gathers after the last of them or before the first (the previous step's parameters
// gathered in this step's forward), on its data-parallel communicator.
ShardedOptimizerRun findShardedOptimizer(const WhatIfModel& model);

// One step's collectives of the optimizer on one rank (indices into its calls, in order): the
// reduce-scatters on communicator `comm`, the all-gathers on it after the last of them, those
// before the first (the previous step's parameters gathered in this step's forward), and how many
// fall between the first and the last (a fully sharded run).
struct OptimizerCollectives {
  std::vector<std::size_t> reduces, gathers, leading_gathers;
  std::size_t gathers_between = 0;

  // All-gathers before the last reduce-scatter: ones a rewrite of `gathers` alone leaves as they are.
  std::size_t earlierGathers() const { return leading_gathers.size() + gathers_between; }
};
OptimizerCollectives optimizerCollectives(const RecordedRank& rank, std::int64_t step, std::uint64_t comm);

// The next call after `i` on `stream` before `end`, or `end` when there is none.
std::size_t nextCallOn(const RecordedRank& rank, std::size_t i, StreamHandle stream, std::size_t end);

// The communicator whose reduce-scatters move the most bytes in `rank`'s step `step` (its index
// and id, CollectiveArgs::comm_index and ::comm): the data-parallel one, whose collectives a
// sharded optimizer or FSDP issues. Nullopt when the step reduce-scatters nothing.
struct ReducingCommunicator {
  std::uint32_t index = 0;
  std::uint64_t comm = 0;
};
std::optional<ReducingCommunicator> mostReducingCommunicator(const RecordedRank& rank, std::int64_t step);

// The record of the event that call `wait` waits for: the last record of that event before it.
std::optional<std::size_t> recordOfWait(const RecordedRank& rank, std::size_t wait);

// The event and the wait just before call `i` on its stream, as a collective issued on a stream
// of its own has them: the last call on that stream before it waits for an event, recorded
// earlier on some stream (indices into the rank's calls). Nullopt when the calls are not so.
struct ReadyPair {
  std::size_t record = 0, wait = 0;
};
std::optional<ReadyPair> readyPairBefore(const RecordedRank& rank, std::size_t i);

// The calls a step's may be among on one rank, [begin, end): from its first to the first of the
// step after next (the calls after a step that still concern it: the next step's waits for its
// collectives). Empty when the rank has no call of the step.
std::pair<std::size_t, std::size_t> stepCalls(const RecordedRank& rank, std::int64_t step);

// The schedule the settings make of the run (above): the optimizer's reduce-scatter groups
// moved when `grad_reduce`, its all-gather groups when `param_gather`.
ScheduleRules shardedOverlapRules(const std::vector<RecordedGroup>& groups, const ShardedOptimizerRun& optimizer,
                                  bool grad_reduce, bool param_gather);

// The line to change for `framework` ("Megatron-LM", "DeepSpeed", or empty when the run names
// neither: each framework's, and what an optimizer of one's own does).
std::string shardedOverlapHowTo(ShardedOverlap which, const std::string& framework);

}  // namespace syncopate::tuner
