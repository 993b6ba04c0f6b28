// Finding the training iterations of each rank.
//
// With step markers — NVTX (or PyTorch record_function) ranges on a host thread named
// `ProfilerStep#<N>`, or the name given to --iteration-marker (a range whose name equals it or
// starts with `NAME ` / `NAME#`) — an op belongs to the step whose host range contains the
// start of the API call that launched it (the op's own start when it has no recorded launch),
// as HTA assigns iterations. Without markers, iterations are found from the repeating sequence
// of launched ops (see iterations.cpp).
//
// On the GPU an iteration's window runs from the start of its first op to the start of the
// next iteration's first op (to the end of its last op for the last one, or when the next
// step is not the following number), so consecutive windows tile the timeline and their
// lengths are the iteration times.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::analyzer {

enum class IterationSource : std::uint8_t { Markers, Pattern, WholeRun };

struct IterationOptions {
  std::string marker;  // empty: the default markers (ProfilerStep#N)
};

struct RankIteration {
  std::int64_t number = 0;
  std::int64_t start = 0, end = 0;            // GPU window, aligned ns
  std::int64_t host_start = 0, host_end = 0;  // the step marker, or first/last launch of the pattern
  Index op_count = 0;                         // GPU ops that belong to it
};

struct Iterations {
  IterationSource source = IterationSource::WholeRun;
  std::string marker;                              // marker name used (Markers)
  std::int64_t pattern_length = 0;                 // ops per iteration (Pattern)
  std::vector<std::vector<RankIteration>> per_rank;  // index: row in RunModel::ranks
  std::vector<std::int64_t> numbers;               // all iteration numbers, ascending
  std::vector<std::string> notes;                  // what was skipped and why, one sentence each
};

// Fails only when --iteration-marker names a range that no rank has.
trace::Result<Iterations> detectIterations(const RunModel& model, const IterationOptions& options = {});

// detectIterations in two parts, for a distributed analysis that has each rank's rows where its
// store was read: what each rank's own rows say, and the run's iterations from every rank's.
// Whether the run has step markers at all decides how every rank is cut, so that comes first.
bool rankHasIterationMarkers(const RunModel& model, Index rank, const IterationOptions& options);
struct RankIterationFacts {
  std::vector<RankIteration> iterations;  // from the markers, or from the rank's repeating pattern
  std::int64_t period = 0;                // ops per pattern iteration
  std::vector<std::string> notes;
  RankIteration whole_run;                // the rank's busy time (op_count 0: none), should the run have neither
  bool has_ops = false;                   // any op at all, markers too
};
RankIterationFacts rankIterations(const RunModel& model, Index rank, const IterationOptions& options, bool any_marker);
// `facts` indexed by rank row; `model` needs only its ranks and collectives (pattern iterations
// are numbered alike on every rank from the collectives they hold).
trace::Result<Iterations> combineRankIterations(const RunModel& model, const IterationOptions& options, bool any_marker,
                                                std::vector<RankIterationFacts> facts);

// True if `name` is an iteration marker for `marker` (empty: ProfilerStep#N); sets *number to
// the number after '#' when there is one.
bool isIterationMarker(std::string_view name, std::string_view marker, std::int64_t* number);

std::string_view toString(IterationSource s);

}  // namespace syncopate::analyzer
