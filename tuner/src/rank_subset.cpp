#include "syncopate/tuner/rank_subset.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>


namespace syncopate::tuner {

RankSubset slowestRanks(const analyzer::StoredResults& results, std::size_t count) {
  const analyzer::Analysis& a = results.analysis;
  std::vector<analyzer::Index> rows;
  for (analyzer::Index r = 0; r < a.ranks.size(); ++r)
    if (a.ranks[r].iterations > 0) rows.push_back(r);
  std::stable_sort(rows.begin(), rows.end(), [&](analyzer::Index x, analyzer::Index y) {
    const analyzer::RankSummary& p = a.ranks[x];
    const analyzer::RankSummary& q = a.ranks[y];
    if (p.collective_wait_ns != q.collective_wait_ns) return p.collective_wait_ns < q.collective_wait_ns;
    return p.mean.busy_ns > q.mean.busy_ns;
  });
  rows.resize(std::min(rows.size(), count));
  std::sort(rows.begin(), rows.end());
  RankSubset out;
  out.rank_rows = rows;
  for (analyzer::Index r : rows) out.ranks.push_back(results.ranks[r].rank);
  out.of = results.ranks.size();
  return out;
}

namespace {

bool pointToPoint(trace::CollType type) { return type == trace::CollType::Send || type == trace::CollType::Recv; }

// Each collective of the subset gets the whole run's timing of the same call: the same
// communicator, sequence number and kind. Sends and receives are numbered per pair of ranks, not
// per communicator, so they keep the subset's own timing.
void takeWholeRunTimings(const analyzer::RunModel& m, analyzer::Analysis& a, const analyzer::StoredResults& results) {
  std::map<std::tuple<std::int64_t, std::int64_t, std::string_view>, const analyzer::StoredCollective*> whole;
  for (const analyzer::StoredCollective& c : results.collectives) whole.emplace(std::make_tuple(c.comm_id, c.seq, std::string_view(c.coll_type)), &c);
  for (analyzer::CollectiveTiming& t : a.collectives.calls) {
    const trace::CollType type = m.matches.coll_type[t.match];
    if (pointToPoint(type)) continue;
    auto it = whole.find({m.matches.comm_id[t.match], m.matches.seq[t.match], trace::toString(type)});
    if (it == whole.end()) continue;
    const analyzer::StoredCollective& c = *it->second;
    t.complete = c.complete;
    t.ranks = c.ranks;
    t.first_arrival = c.first_arrival_ns;
    t.last_arrival = c.last_arrival_ns;
    t.end = c.end_ns;
  }
}

}  // namespace

trace::Result<SubsetRun> loadRankSubset(const std::filesystem::path& run_dir, const analyzer::StoredResults& results,
                                        const RankSubset& subset, const analyzer::AnalysisOptions& options,
                                        const SubsetProgress& progress) {
  analyzer::LoadOptions load;
  if (progress) load.progress = progress;
  auto model = analyzer::loadStoredRanks(run_dir, results, subset.rank_rows,
                                         std::vector<bool>(subset.rank_rows.size(), true), load);
  if (!model) return model.status();
  auto analysis = analyzer::analyze(*model, options);
  if (!analysis) return analysis.status();
  takeWholeRunTimings(*model, *analysis, results);
  return SubsetRun{std::move(model).value(), std::move(analysis).value()};
}

}  // namespace syncopate::tuner
