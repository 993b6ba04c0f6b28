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
#include <functional>
#include <memory>
#include <string>
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
                                 // (a path walked in legs: in the model of the process that
                                 // walked it; CriticalPath::nodes says what it was)
  Index rank = 0;                // rank row of that node
  std::int64_t start = 0, end = 0;
  PathCategory category = PathCategory::Idle;
  Index straggler = kNone;       // StragglerWait: the rank row that arrived last
  bool waiting = false;          // time before `node` started (a gap), not time inside it
};

// What the results say of a segment's node: read from the model that holds it.
struct PathNodeFacts {
  std::int64_t store_id = kUnknown;  // the row's id in its rank's store
  Index thread = kNone;              // an API call's thread row (in the model that holds it)
  std::string name;                  // as the report names the segment: the op or call, "waiting
                                     // before <op>", the range open on the host, "host sync"
};
PathNodeFacts pathNodeFacts(const RunModel& model, const PathSegment& segment);

struct CriticalPath {
  std::int64_t iteration = 0;
  std::int64_t start = 0, end = 0;              // [earliest iteration start of any rank, last end]
  std::vector<PathSegment> segments;            // in time order, contiguous, covering [start, end]
  // By segment, for a path walked in legs by the processes holding its ranks (whose nodes the
  // analysis's model does not hold); empty when the model holds every node.
  std::vector<PathNodeFacts> nodes;
  PathNodeFacts nodeFacts(const RunModel& model, std::size_t segment) const {
    return nodes.empty() ? pathNodeFacts(model, segments[segment]) : nodes[segment];
  }
  std::array<std::int64_t, kPathCategories> attribution{};  // ns per PathCategory
  std::int64_t length() const { return end - start; }
  void attribute();  // sums the segments' time by category into `attribution`
  std::int64_t attributed(PathCategory c) const { return attribution[static_cast<std::size_t>(c)]; }
};

// Where an iteration's path begins and ends on one rank: the start of the rank's window for the
// path (its GPU window, or the host work that issued the first op of a first iteration), and the
// op of the window that ended last (kNone when the window holds only markers). The path of an
// iteration runs from the earliest start of any rank to the latest sink of any rank (the lowest
// rank row on a tie).
struct RankPathEnds {
  std::int64_t start = 0;
  Index sink = kNone;
};
RankPathEnds rankPathEnds(const RunModel& model, Index rank, const RankIteration& iteration);

// Where the participants of a collective arrived (their ops started), as the walk needs it at
// one participant's op: the last and second-to-last arrivals, and the op that arrived last (this
// op on a tie), by its rank row, its id in its store and, when the model walked holds it, its row.
struct CollectiveArrival {
  std::int64_t last = 0, second = 0;
  Index last_rank = kNone;
  std::int64_t last_store_id = kUnknown;
  Index last_op = kNone;
};
// Where the participants of match `match` arrived: the last arrival, the first participant (in
// the match's order) to arrive then, and the second-to-last arrival (the last again when two
// arrived last). A participant that arrived last is its own last arrival; any other waited for
// `first_last`.
struct MatchArrivals {
  std::int64_t last = INT64_MIN, second = INT64_MIN;
  Index first_last = kNone;  // an op
};
MatchArrivals matchArrivals(const RunModel& model, Index match);
// What a model's own matches say of the collective op `op`: false when it is not a collective
// matched across more than one rank.
bool matchedArrival(const RunModel& model, Index op, CollectiveArrival& out);

// A path walked in legs, each on the ranks of one process (a distributed analysis: every process
// holds its own ranks' ops, and the walk leaves a rank only at a collective whose last arrival is
// another rank's). A leg starts at an iteration's sink, or before the op where the last leg
// left off, carrying the window of straggler time that is still open.
struct PathLegStart {
  Index op = kNone;            // in the walking process's model
  std::int64_t time = 0;       // the path is covered after it
  bool before = false;         // false: at the sink, covering it from its end; true: what the op waited for
  std::int64_t floor = 0;      // the iteration's path start
  Index straggler = kNone;     // the rank row whose lateness the open window is
  std::int64_t straggler_floor = 0;
};
struct PathLeg {
  std::vector<PathSegment> segments;  // in time order
  bool handed_off = false;            // the walk goes on before `next` at `next_time`:
  CollectiveArrival next;             // the op that arrived last, on a rank this model lacks
  std::int64_t next_time = 0;
  Index straggler = kNone;            // the straggler window still open, for the next leg
  std::int64_t straggler_floor = 0;
};
using ArrivalOf = std::function<bool(Index op, CollectiveArrival& out)>;

class PathIndex;
class PathWalker {
 public:
  explicit PathWalker(const RunModel& model);
  ~PathWalker();
  PathWalker(const PathWalker&) = delete;
  PathWalker& operator=(const PathWalker&) = delete;
  // Walks backwards from `start` while the path stays in this model; `arrival` says where each
  // collective's participants arrived. Thread-safe: legs may be walked at once.
  PathLeg walk(const PathLegStart& start, const ArrivalOf& arrival) const;

 private:
  const RunModel& model_;
  std::unique_ptr<PathIndex> index_;
};

// One path per iteration number of `iterations`, in ascending order.
std::vector<CriticalPath> criticalPaths(const RunModel& model, const Iterations& iterations);

// The path ending at GPU op `sink`, cut at `window_start`.
CriticalPath criticalPathTo(const RunModel& model, Index sink, std::int64_t window_start);

}  // namespace syncopate::analyzer
