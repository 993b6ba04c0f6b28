// A sharded optimizer's gradient reduce-scatters, and the framework setting that overlaps them
// with backward (docs/tuner.md, "Sharded optimizers: overlapping the gradients' reduction"):
// Megatron-LM's --overlap-grad-reduce (its distributed optimizer) and DeepSpeed ZeRO stage 1/2's
// overlap_comm. Without it, every gradient bucket is reduce-scattered after backward, in line
// on the compute stream; with it, each bucket's reduce-scatter is issued on a stream of the
// framework's own as soon as backward has written the bucket, buckets in order, and the
// optimizer waits for them all. That is a schedule the model already replays: the run's
// reduce-scatter groups on a communication stream, each starting when its producers end, in the
// program's order, with everything else (the parameters' all-gathers among them) where the
// program put it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncopate/tuner/schedule_rules.hpp"
#include "syncopate/tuner/search.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace syncopate::tuner {

struct ShardedGradReduce {
  bool found = false;
  std::string why_not;            // when not found, in one sentence
  std::size_t reduce_scatters = 0;  // one step's gradient reduce-scatters (rank 0)
  std::uint64_t bytes = 0;        // the gradients they reduce, in all
  bool overlapped = false;        // already on a stream other than their producers' (the setting on)
};

// The run's gradient reduce-scatters among the groups the search found (search.hpp): every
// group of reduce-scatters only, on rank 0.
ShardedGradReduce findShardedGradReduce(const WhatIfModel& model, const std::vector<RecordedGroup>& groups);

// The schedule the setting makes of the run (above).
ScheduleRules overlapGradReduceRules(const std::vector<RecordedGroup>& groups);

// The line to change for `framework` ("Megatron-LM", "DeepSpeed", or empty when the run names
// neither: both, and what a hand-written optimizer does).
std::string overlapGradReduceHowTo(const std::string& framework);

}  // namespace syncopate::tuner
