#include "syncopate/gui/model/loaded_run.hpp"

#include <QtConcurrent/QtConcurrentMap>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

namespace syncopate::gui {

const IterationSpan* LoadedRun::iteration(std::int64_t number) const {
  auto it = std::lower_bound(iteration_spans.begin(), iteration_spans.end(), number,
                             [](const IterationSpan& s, std::int64_t n) { return s.number < n; });
  return it != iteration_spans.end() && it->number == number ? &*it : nullptr;
}

namespace {

std::vector<IterationSpan> spansOf(const analyzer::Iterations& its) {
  std::map<std::int64_t, IterationSpan> spans;
  for (const auto& rank : its.per_rank) {
    for (const auto& it : rank) {
      auto [pos, added] = spans.try_emplace(it.number, IterationSpan{it.number, it.start, it.end});
      if (!added) {
        pos->second.start = std::min(pos->second.start, it.start);
        pos->second.end = std::max(pos->second.end, it.end);
      }
    }
  }
  std::vector<IterationSpan> out;
  for (const auto& [n, s] : spans) out.push_back(s);
  return out;
}

// Extent of every row of `rank` (ops, API calls, NVTX ranges, host syncs).
analyzer::Interval rowExtent(const analyzer::RunModel& m, Index rank) {
  const auto& r = m.ranks[rank];
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
  auto add = [&](const std::vector<std::int64_t>& start, const std::vector<std::int64_t>& end, Index first, Index count) {
    for (Index i = first; i < first + count; ++i) lo = std::min(lo, start[i]), hi = std::max(hi, end[i]);
  };
  add(m.ops.start, m.ops.end, r.first_op, r.op_count);
  for (Index t = r.first_thread; t < r.first_thread + r.thread_count; ++t)
    add(m.api_calls.start, m.api_calls.end, m.threads[t].first_call, m.threads[t].call_count);
  add(m.ranges.start, m.ranges.end, r.first_range, r.range_count);
  add(m.host_syncs.start, m.host_syncs.end, r.first_host_sync, r.host_sync_count);
  if (lo > hi) return {0, 0};
  // A recording window that holds the rows says more (the GPU idled before the first op too);
  // one that does not (a store written later than its times, as importers do) is ignored.
  if (r.recording_end_ns > r.recording_start_ns && r.recording_start_ns <= lo && r.recording_end_ns >= hi)
    return {r.recording_start_ns, r.recording_end_ns};
  return {lo, hi};
}

// What a run opened on its summary knows of the ranks whose rows are not loaded: each
// iteration's exposed and idle shares, and the time the iterations span (the run's extent is
// then the loaded rows' and the iterations').
void addSummaryShares(LoadedRun& run) {
  const analyzer::Analysis& a = run.summary->results->analysis;
  run.iteration_shares.assign(run.model.ranks.size(), {});
  bool has_extent = run.end_ns > run.begin_ns;
  for (const analyzer::RankIterationMetrics& r : a.rank_iterations) {
    if (!has_extent) run.begin_ns = r.window.start, run.end_ns = r.window.end, has_extent = true;
    run.begin_ns = std::min(run.begin_ns, r.window.start);
    run.end_ns = std::max(run.end_ns, r.window.end);
    if (run.rowsLoaded(r.rank) || r.time.window_ns <= 0) continue;
    const auto window = static_cast<double>(r.time.window_ns);
    run.iteration_shares[r.rank].push_back({r.window.start, r.window.end,
                                            static_cast<double>(r.time.exposed_communication_ns) / window,
                                            static_cast<double>(r.time.idle_ns) / window});
  }
  // The painter looks them up by start; iteration numbers need not ascend with time.
  for (auto& shares : run.iteration_shares)
    std::sort(shares.begin(), shares.end(), [](const IterationShare& x, const IterationShare& y) { return x.start < y.start; });
}

}  // namespace

trace::Result<std::shared_ptr<LoadedRun>> prepareRun(analyzer::RunModel model, std::uint32_t run,
                                                     std::string label, const ProgressFn& progress,
                                                     std::optional<RunSummary> summary) {
  auto out = std::make_shared<LoadedRun>();
  out->label = std::move(label);
  out->model = std::move(model);
  const analyzer::RunModel& m = out->model;
  out->begin_ns = m.beginNs();
  out->end_ns = m.endNs();
  if (summary) {
    if (summary->rows_loaded.size() != m.ranks.size() || summary->results->ranks.size() != m.ranks.size())
      return trace::failure("the run's analysis results are of " + std::to_string(summary->results->ranks.size()) +
                            " ranks and its stores of " + std::to_string(m.ranks.size()) + ": run 'syncopate analyze' on it again");
    out->summary = std::move(summary);
    addSummaryShares(*out);
  }

  // Three independent pieces of work: the iterations on one pool thread while this one and the
  // rest of the pool measure each rank's activity and lay out its lanes. A summary has them.
  std::optional<trace::Result<analyzer::Iterations>> iterations;
  QFuture<void> finding = QtConcurrent::run([&] {
    iterations.emplace(out->summary ? trace::Result<analyzer::Iterations>(out->summary->results->analysis.iterations)
                                    : analyzer::detectIterations(m));
  });

  if (progress) progress("Measuring activity", 0, m.ranks.size());
  out->activity.resize(m.ranks.size());
  out->exposed.resize(m.ranks.size());
  out->rank_window.resize(m.ranks.size());
  std::vector<Index> ranks(m.ranks.size());
  std::iota(ranks.begin(), ranks.end(), Index{0});
  QtConcurrent::blockingMap(ranks, [&](Index r) {
    out->activity[r] = analyzer::rankActivity(m, r);
    out->exposed[r] = out->activity[r].communication.subtract(out->activity[r].overlapped);
    out->rank_window[r] = rowExtent(m, r);
  });

  if (progress) progress("Laying out lanes", 0, 1);
  out->lanes = buildLanes(m, run, out->label);

  if (progress) progress("Finding iterations", 0, 1);
  finding.waitForFinished();
  if (!*iterations) return iterations->status();
  out->iterations = std::move(*iterations).value();
  out->iteration_spans = spansOf(out->iterations);
  return out;
}

trace::Result<analyzer::Analysis> analyzeRun(const LoadedRun& run) {
  if (run.summary) return run.summary->results->analysis;
  return analyzer::analyze(run.model);
}

}  // namespace syncopate::gui
