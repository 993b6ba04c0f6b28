#include "syncopate/analyzer/streamed_analysis.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "syncopate/analyzer/rank_batches.hpp"

namespace syncopate::analyzer {

trace::Result<StreamedAnalysis> analyzeRunStreamed(const std::vector<StoreRowCount>& stores, const LoadOptions& load,
                                                   const AnalysisOptions& options) {
  if (options.critical_path)
    return trace::failure("the critical path walks every rank's ops across ranks: a run analysed in batches is analysed "
                          "without it (--no-critical-path)");
  PhaseScope phase(load.timings, "first pass: summaries and iterations");
  auto batches = RankBatches::read(stores, load.memory_limit, options.iterations);
  if (!batches) return batches.status();
  // One process analyses the whole run or none of it, as loadRun does.
  for (const auto& summary : batches->summaries())
    if (!summary) return summary.status();

  if (load.timings) load.timings->start("summary model");
  LoadOptions summary_load;
  summary_load.clock = load.clock;
  summary_load.unmatched_events_elsewhere = batches->unmatched();
  std::vector<trace::StoreFile> files;
  for (const StoreRowCount& c : stores) files.push_back(c.store);
  auto summary = loadPackedRun(files, [&](std::size_t i) { return std::move(batches->summaries()[i]); }, summary_load);
  if (!summary) return summary.status();
  batches->summaries().clear();
  RunModel& m = *summary;
  std::map<std::string, Index> row_of;
  for (Index r = 0; r < m.ranks.size(); ++r) row_of[std::filesystem::path(m.ranks[r].store_path).filename().string()] = r;
  const auto rowOf = [&](const RankFirstPass& f) { return row_of.at(f.store); };

  if (load.timings) load.timings->start("combine iterations");
  bool any_marker = false;
  for (const RankFirstPass& f : batches->ranks()) any_marker |= f.has_markers;
  std::vector<RankIterationFacts> facts(m.ranks.size());
  std::uint64_t run_ops = 0, run_calls = 0;
  for (const RankFirstPass& f : batches->ranks()) {
    facts[rowOf(f)] = f.factsFor(any_marker, m.ranks[rowOf(f)].to_aligned_ns);
    run_ops += f.ops, run_calls += f.api_calls;
  }
  auto iterations = combineRankIterations(m, options.iterations, any_marker, std::move(facts));
  if (!iterations) return iterations.status();

  if (load.timings) load.timings->start("second pass: rank metrics");
  std::vector<RankPart> parts(m.ranks.size());
  trace::Status measured = batches->measure(
      [&](const RankFirstPass& f) { return m.ranks[rowOf(f)].to_aligned_ns; },
      [&](const RunModel& model, Index r, const RankFirstPass& f) {
        const Index row = rowOf(f);
        RankPart part = analyzeRankPart(model, r, iterations->per_rank[row], options);
        for (RankIterationMetrics& metrics : part.rows) metrics.rank = row;
        for (StreamIdle& s : part.streams) s.stream = s.stream - model.ranks[r].first_stream + m.ranks[row].first_stream;
        for (KernelTally& k : part.kernels) k.name = m.strings.intern(model.str(k.name));
        parts[row] = std::move(part);
        return trace::Status();
      });
  if (!measured) return measured;
  auto analysis = combineRankParts(m, std::move(iterations).value(), std::move(parts), options, load.timings);
  if (!analysis) return analysis.status();
  analysis->run_ops = run_ops, analysis->run_api_calls = run_calls;
  return StreamedAnalysis{std::move(m), std::move(analysis).value(), batches->batches()};
}

}  // namespace syncopate::analyzer
