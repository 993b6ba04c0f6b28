// The critical paths of a run whose ranks stay in the processes that read them (docs/analyzer.md,
// "Ranks analysed where they were read"). The walk leaves a rank only at a collective whose last
// arrival is another rank's, so each process walks its own ranks in legs and the root stitches
// them:
//   1. the root, whose model holds every collective, tells each process where the participants
//      of its ranks' collectives arrived (CollectiveArrival, by rank row and store id);
//   2. each process says where its ranks' iterations begin and end (rankPathEnds), and the root
//      picks each iteration's sink and start;
//   3. in rounds, the root asks the process holding each path's next rank for the next leg
//      (PathWalker; a process walks on through the ranks it holds), and each leg comes back with
//      its segments, what their nodes were (PathNodeFacts), and the rank it handed the walk to.
// The paths are those criticalPaths() finds on a model of the whole run.
#pragma once

#include <cstdint>
#include <vector>

#include "syncopate/analyzer/critical_path.hpp"
#include "syncopate/analyzer/mpi_session.hpp"
#include "syncopate/trace/status.hpp"

namespace syncopate::analyzer {

// What a process holds of the run: its ranks' model, on the run's time axis, and the rank row
// in the run of each of that model's ranks.
struct OwnRanks {
  const RunModel& model;
  std::vector<Index> row_of;
};

// What only the root knows: the run's model of what the ranks share (every collective, matched),
// its iteration numbers, and which process holds each rank row.
struct RunOnRoot {
  const RunModel& model;
  const std::vector<std::int64_t>& numbers;
  const std::vector<int>& process_of_row;
};

struct PathsInLegs {
  std::vector<CriticalPath> paths;  // on the root
  std::size_t legs = 0, rounds = 0;  // on the root: legs walked, in how many rounds of exchanges
};

// Called by every process, `walker` over its own ranks' model; `root` on the root only, `per_rank`
// (every rank row's iterations) on every process. The paths, on the root, or a failure every process shares. Bytes this process
// sent are added to `sent`.
trace::Result<PathsInLegs> walkCriticalPathsInLegs(const MpiSession& mpi, const RunOnRoot* root,
                                                 const OwnRanks& own, const PathWalker& walker,
                                                 const std::vector<std::vector<RankIteration>>& per_rank,
                                                 std::uint64_t& sent);

}  // namespace syncopate::analyzer
