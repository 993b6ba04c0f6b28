// The critical path of an iteration: the chain of ops, across every rank, that set when the
// iteration finished.
//
// The run is a DAG whose nodes are GPU ops, host API calls and host syncs, with edges
//   stream order         an op starts after the previous op of its stream ends;
//   event record -> wait a stream wait ends after the event's record;
//   host launch -> op    an op starts after the API call that launched it started;
//   host order           an API call starts after the previous call of its thread ended;
//   host sync            a blocking call returns after the GPU op it waited for ended;
//   collective           a collective ends after the last rank arrived (its op started).
// The path is found backwards from the iteration's last-ending op: at each node, the
// predecessor that became ready last is the one that held it up (a longest path in a DAG whose
// edge weights are the measured times). Every nanosecond of [iteration start, last end] is on
// exactly one segment, and each segment is attributed to one category:
//   compute, memory, communication  time of a GPU op on the path (communication on the path is
//                                   exposed by definition: counted from the last arrival);
//   straggler_wait                  the path ran on the rank that arrived last at a collective,
//                                   between the second-to-last arrival and its own: time every
//                                   other rank spent waiting for it;
//   launch                          a GPU op waited for the host call that launched it;
//   host                            host time: API calls and the CPU work between them;
//   sync                            a blocking host call returning after the GPU work it waited for;
//   idle                            the GPU waited with no recorded reason (or before the data).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "syncopate/analyzer/iterations.hpp"
#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::analyzer {

enum class PathCategory : std::uint8_t {
  Compute = 0, Memory, Communication, StragglerWait, Launch, Host, Sync, Idle,
};
inline constexpr std::size_t kPathCategories = 8;
std::string_view toString(PathCategory c);

struct PathSegment {
  NodeRef node;                  // the op / call the time was spent in, or that waited for it
  Index rank = 0;                // rank row of that node
  std::int64_t start = 0, end = 0;
  PathCategory category = PathCategory::Idle;
  Index straggler = kNone;       // StragglerWait: the rank row that arrived last
  bool waiting = false;          // time before `node` started (a gap), not time inside it
};

struct CriticalPath {
  std::int64_t iteration = 0;
  std::int64_t start = 0, end = 0;              // [earliest iteration start of any rank, last end]
  std::vector<PathSegment> segments;            // in time order, contiguous, covering [start, end]
  std::array<std::int64_t, kPathCategories> attribution{};  // ns per PathCategory
  std::int64_t length() const { return end - start; }
  std::int64_t attributed(PathCategory c) const { return attribution[static_cast<std::size_t>(c)]; }
};

// One path per iteration number of `iterations`, in ascending order.
std::vector<CriticalPath> criticalPaths(const RunModel& model, const Iterations& iterations);

// The path ending at GPU op `sink`, cut at `window_start`.
CriticalPath criticalPathTo(const RunModel& model, Index sink, std::int64_t window_start);

}  // namespace syncopate::analyzer
