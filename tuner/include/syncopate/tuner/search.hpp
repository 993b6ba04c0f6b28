// The search over gradient synchronisation schedules (docs/tuner.md, "The search").
//
// A schedule is a set of knobs (Knobs) that, for each group of collectives the recorded run
// flushes (all-reduces, reduce-scatters, all-gathers), says how to bucket, order, split and
// place them; the search turns knobs into ScheduleRules, predicts each with the what-if model
// and ranks them. It covers:
//   - the communication stream (on: buckets start as soon as their producers end; off: they
//     start where the application called them, and only fusion is gained);
//   - bucket (fusion) size: consecutive collectives of one kind and reduction fused up to a
//     byte cap (reduce-scatters and all-gathers through a fusion buffer laid out rank by rank),
//     leaving out schedules whose fusion buffer exceeds the memory limit;
//   - order: as the program issued them, as their producers finish (ready order), with the
//     last buckets to be ready issued first layers first (priority to what the next forward
//     needs), or as the program first reads their results (need order: the next forward's
//     all-gathers of parameters first layers first), and large all-reduce buckets split into
//     parts;
//   - cross-iteration update overlap: each consumer waits only for its own bucket, or the
//     first consumer waits for the whole group;
//   - the one-step-delayed mode: predicted, labelled as changing the training mathematics,
//     never recommended.
// NCCL's channel count is not searched: neither the model nor simgpu gives it an effect on
// interference that a run could show.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "syncopate/tuner/knobs.hpp"
#include "syncopate/tuner/schedule_rules.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace syncopate::tuner {



// A group of collectives as the scheduler flushes it in the recorded run (rank 0), with, per
// member, where in the call sequence its buffer was last touched before it (its producer) and
// first touched after it (its consumer).
struct RecordedGroup {
  std::uint64_t signature = 0;
  std::vector<CollectiveArgs> members;
  std::vector<std::size_t> producer_call;  // per member; the member's own call when none
  std::vector<std::size_t> consumer_call;  // per member; past the modelled calls when none
  std::vector<std::size_t> member_call;
};

// Whether call `c` reads or writes any byte of [lo, hi) (a call whose pointers are not known
// is taken to touch everything).
bool touches(const Call& c, std::uint64_t lo, std::uint64_t hi);
// Whether call `c` touches either buffer of collective `a` (its input or its result).
bool touchesBuffersOf(const Call& c, const CollectiveArgs& a);

// The last call before collective `call` of `rank` that touched its buffers (its producer), or
// `call` itself when none did.
std::size_t producerOf(const RecordedRank& rank, std::size_t call);

// The distinct groups rank 0 flushes in the modelled iterations. Fails when ranks flush
// different groups (their call sequences differ: the runtime could not apply a plan).
trace::Result<std::vector<RecordedGroup>> recordedGroups(const WhatIfModel& model);

ScheduleRules rulesFor(const Knobs& knobs, const std::vector<RecordedGroup>& groups);

struct Candidate {
  Knobs knobs;
  Prediction prediction;
  double gain = 0;  // 1 - predicted / predicted baseline (replay)
  std::uint64_t fusion_buffer_bytes = 0;  // device memory the runtime allocates for it (0: none)
};

struct SearchOptions {
  double min_gain = 0.02;        // plans predicted to gain less are not recommended
  bool include_delayed = true;   // predict the delayed mode too (never recommended)
  // Device memory the runtime may allocate for a schedule's fusion buffer; schedules that need
  // more are not predicted. 0: no limit.
  std::uint64_t memory_limit = 0;
};

struct SearchResult {
  Prediction baseline;                // replay of the recorded schedule
  std::vector<Candidate> candidates;  // best first (delayed ones included, labelled)
  int recommended = -1;               // index in candidates, or -1: nothing gains enough
  std::vector<RecordedGroup> groups;
  std::string note;                   // why nothing is recommended, when it is not
  std::size_t over_memory_limit = 0;  // schedules left out: their fusion buffer exceeds the limit
};

// progress(done, total) is called after each prediction.
using Progress = std::function<void(std::size_t done, std::size_t total)>;

trace::Result<SearchResult> search(const WhatIfModel& model, const SearchOptions& options = {},
                                   const Progress& progress = {});

}  // namespace syncopate::tuner
