#include "syncopate/analyzer/analysis.hpp"

#include <algorithm>
#include <string>

#include "syncopate/analyzer/parallel_for.hpp"

namespace syncopate::analyzer {

namespace {

TimeBreakdown divided(const TimeBreakdown& t, std::int64_t n) {
  if (n <= 0) return {};
  TimeBreakdown r;
  r.window_ns = t.window_ns / n;
  r.compute_ns = t.compute_ns / n;
  r.communication_ns = t.communication_ns / n;
  r.memory_ns = t.memory_ns / n;
  r.overlapped_communication_ns = t.overlapped_communication_ns / n;
  r.exposed_communication_ns = t.exposed_communication_ns / n;
  r.busy_ns = t.busy_ns / n;
  r.idle_ns = t.idle_ns / n;
  r.non_compute_ns = t.non_compute_ns / n;
  for (std::size_t g = 0; g < kCollectiveGroups; ++g) r.exposed_by_collective_ns[g] = t.exposed_by_collective_ns[g] / n;
  return r;
}

// Collective wait of each rank, by the iteration window its collectives start in.
void addCollectiveWaits(const RunModel& m, const CollectiveAnalysis& coll, std::vector<RankIterationMetrics>& rows,
                        const std::vector<std::vector<std::size_t>>& rows_of_rank) {
  for (const CollectiveTiming& t : coll.calls) {
    for (Index p : m.matches.of(t.match)) {
      const Index op = m.collectives.op[p];
      const Index rank = m.rankOfOp(op);
      const std::int64_t start = m.ops.start[op];
      for (std::size_t row : rows_of_rank[rank]) {
        RankIterationMetrics& r = rows[row];
        if (start >= r.window.start && start < r.window.end) {
          r.collective_wait_ns += t.last_arrival - start;
          break;
        }
      }
    }
  }
}

}  // namespace

void summarizeRanks(Analysis& a) {
  std::vector<std::int64_t> wait(a.ranks.size(), 0);
  for (RankSummary& s : a.ranks) s.total = {}, s.iterations = 0;
  for (const RankIterationMetrics& row : a.rank_iterations) {
    RankSummary& s = a.ranks[row.rank];
    s.total += row.time;
    ++s.iterations;
    wait[row.rank] += row.collective_wait_ns;
  }
  a.aggregate = {};
  a.aggregate_collective_wait_ns = 0;
  std::int64_t ranks_with_iterations = 0;
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    RankSummary& s = a.ranks[r];
    s.mean = divided(s.total, s.iterations);
    s.collective_wait_ns = s.iterations > 0 ? wait[r] / s.iterations : 0;
    if (s.iterations == 0) continue;
    ++ranks_with_iterations;
    a.aggregate += s.mean;
    a.aggregate_collective_wait_ns += s.collective_wait_ns;
  }
  a.aggregate = divided(a.aggregate, ranks_with_iterations);
  a.aggregate_collective_wait_ns = ranks_with_iterations > 0 ? a.aggregate_collective_wait_ns / ranks_with_iterations : 0;
}

std::vector<const RankIterationMetrics*> Analysis::iteration(std::int64_t number) const {
  std::vector<const RankIterationMetrics*> out;
  for (const auto& r : rank_iterations)
    if (r.window.number == number) out.push_back(&r);
  return out;
}

std::pair<std::int64_t, std::int64_t> Analysis::iterationSpan(std::int64_t number) const {
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& r : rank_iterations) {
    if (r.window.number != number) continue;
    lo = std::min(lo, r.window.start);
    hi = std::max(hi, r.window.end);
  }
  return lo > hi ? std::make_pair<std::int64_t, std::int64_t>(0, 0) : std::make_pair(lo, hi);
}

RankPart analyzeRankPart(const RunModel& m, Index rank, const std::vector<RankIteration>& iterations,
                         const AnalysisOptions& options) {
  RankPart part;
  const RankActivity activity = rankActivity(m, rank);
  std::vector<Interval> w;
  for (const RankIteration& it : iterations) {
    RankIterationMetrics row;
    row.rank = rank;
    row.window = it;
    row.time = breakdown(activity, it.start, it.end);
    w.push_back({it.start, it.end});
    part.rows.push_back(row);
  }
  const IntervalSet windows = IntervalSet::unionOf(std::move(w));
  part.streams = streamIdle(m, rank, windows, options.kernel_wait_threshold_ns);
  part.kernel_types = kernelTypeBreakdown(activity, windows);
  part.kernels = kernelTallies(m, rank, windows);
  return part;
}

trace::Result<Analysis> combineRankParts(const RunModel& m, Iterations iterations, std::vector<RankPart> parts,
                                         const AnalysisOptions& options, PhaseTimings* timings) {
  Analysis a;
  a.options = options;
  a.iterations = std::move(iterations);
  const std::size_t nranks = m.ranks.size();
  if (parts.size() != nranks) return trace::failure("the analysis has parts of " + std::to_string(parts.size()) + " ranks for a run of " + std::to_string(nranks));
  a.ranks.resize(nranks);
  std::vector<std::vector<std::size_t>> rows_of_rank(nranks);
  KernelTallySum kernels;
  for (std::size_t r = 0; r < nranks; ++r) {
    RankPart& part = parts[r];
    RankSummary& s = a.ranks[r];
    s.rank = static_cast<Index>(r);
    s.streams = std::move(part.streams);
    s.kernel_types = part.kernel_types;
    for (auto& row : part.rows) {
      rows_of_rank[r].push_back(a.rank_iterations.size());
      a.rank_iterations.push_back(row);
    }
    kernels.add(part.kernels);
  }
  if (timings) timings->start("collectives");
  a.collectives = analyzeCollectives(m);
  addCollectiveWaits(m, a.collectives, a.rank_iterations, rows_of_rank);
  summarizeRanks(a);
  for (std::size_t r = 0; r < nranks; ++r) {
    RankSummary& s = a.ranks[r];
    s.collectives = a.collectives.ranks[r];
    for (std::size_t k = 0; k < a.kernel_types.size(); ++k) a.kernel_types[k] += s.kernel_types[k];
  }
  std::stable_sort(a.rank_iterations.begin(), a.rank_iterations.end(), [](const auto& x, const auto& y) {
    return x.window.number != y.window.number ? x.window.number < y.window.number : x.rank < y.rank;
  });
  if (timings) timings->start("kernels");
  a.kernels = kernels.stats(m.strings);
  if (timings) timings->start("critical paths");
  if (options.critical_path) a.critical_paths = criticalPaths(m, a.iterations);
  return a;
}

trace::Result<Analysis> analyze(const RunModel& m, const AnalysisOptions& options, PhaseTimings* timings) {
  PhaseScope phase(timings, "detect iterations");
  auto its = detectIterations(m, options.iterations);
  if (!its) return its.status();
  if (timings) timings->start("rank metrics");
  std::vector<RankPart> parts(m.ranks.size());
  parallelFor(parts.size(), [&](std::size_t r) {
    parts[r] = analyzeRankPart(m, static_cast<Index>(r), its->per_rank[r], options);
  });
  auto a = combineRankParts(m, std::move(its).value(), std::move(parts), options, timings);
  if (a) a->run_ops = m.ops.size(), a->run_api_calls = m.api_calls.size();
  return a;
}

}  // namespace syncopate::analyzer
