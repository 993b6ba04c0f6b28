// Putting every rank on one time axis.
//
// Each store's timestamps are on its host's CLOCK_MONOTONIC; meta.realtime_offset_ns says how
// far CLOCK_REALTIME was ahead of it. Ranks of one host share that clock, so they get one
// offset (the median of theirs). Realtime clocks of different hosts still disagree by NTP's
// error (often tens of microseconds), more than the skew we want to measure, so the offset of
// each host is then refined from collective end times: the ranks of one NCCL collective finish
// together, so the median disagreement of their end times is the clock error. What remains —
// the spread of end times after alignment — is reported as the residual.
//
// Raw timestamps stay recoverable: RankInfo::to_aligned_ns is what was added.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::analyzer {

struct ClockAlignmentOptions {
  bool refine = true;                  // refine host offsets from collectives
  std::size_t min_samples = 3;         // collective end times needed to refine a host
};

// Aligns `model` in place (all timestamps of each rank move by its host's offset plus
// refinement) and says what it did. Call once, on a model with raw store timestamps.
ClockAlignment alignClocks(RunModel& model, const ClockAlignmentOptions& options = {});

// Moves every timestamp of one rank by `delta_ns` (and records it in to_aligned_ns).
void shiftRank(RunModel& model, Index rank, std::int64_t delta_ns);

}  // namespace syncopate::analyzer
