#include "syncopate/analyzer/streamed_analysis.hpp"

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace syncopate::analyzer {

namespace {

// What one rank's rows say, from the first pass: its iterations either way the run may be cut
// (whether any rank has step markers is known only once every rank is read), on its batch's
// clock.
struct RankFirstPass {
  std::string store;  // file name
  bool has_markers = false;
  RankIterationFacts by_markers, by_pattern;
  std::int64_t to_aligned_ns = 0;
  std::uint64_t ops = 0, api_calls = 0;
};

void shift(RankIteration& it, std::int64_t d) { it.start += d, it.end += d, it.host_start += d, it.host_end += d; }

void shift(RankIterationFacts& f, std::int64_t d) {
  for (RankIteration& it : f.iterations) shift(it, d);
  if (f.whole_run.op_count > 0) shift(f.whole_run, d);
}

std::string fileName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// The model of one batch's stores, each on its own clock (the run's alignment comes later).
// A store that cannot be read fails the run, as loadRun does: a single process analyses the
// whole run or none of it.
trace::Result<RunModel> batchModel(const std::vector<trace::StoreFile>& files,
                                   const std::function<trace::Result<PackedStore>(std::size_t)>& read) {
  LoadOptions batch_load;
  batch_load.clock.refine = false;
  trace::Status failed;
  auto model = loadPackedRun(files, [&](std::size_t i) {
    auto bytes = read(i);
    if (!bytes && failed) failed = bytes.status();
    return bytes;
  }, batch_load);
  if (!failed) return failed;
  return model;
}

}  // namespace

trace::Result<StreamedAnalysis> analyzeRunStreamed(const std::filesystem::path& run_dir, const LoadOptions& load,
                                                   const AnalysisOptions& options) {
  if (options.critical_path)
    return trace::failure("the critical path walks every rank's ops across ranks: a run analysed in batches is analysed "
                          "without it (--no-critical-path)");
  PhaseScope phase(load.timings, "count and batch stores");
  auto counts = countStoreRows(run_dir);
  if (!counts) return counts.status();
  // Consecutive stores while their model fits the limit.
  std::vector<std::vector<trace::StoreFile>> batches;
  std::uint64_t ops = 0, calls = 0;
  for (const StoreRowCount& c : *counts) {
    if (load.memory_limit > 0 && modelBytesEstimate(c.ops, c.api_calls) > load.memory_limit)
      return trace::failure(memoryLimitSentence(fmt::format("{} alone, whose", c.store.path.filename().string()), c.ops,
                                                c.api_calls, load.memory_limit));
    if (batches.empty() || (load.memory_limit > 0 && modelBytesEstimate(ops + c.ops, calls + c.api_calls) > load.memory_limit))
      batches.emplace_back(), ops = 0, calls = 0;
    batches.back().push_back(c.store);
    ops += c.ops, calls += c.api_calls;
  }

  if (load.timings) load.timings->start("first pass: summaries and iterations");
  std::vector<PackedStore> summaries;
  std::vector<RankFirstPass> first;
  UnmatchedEvents unmatched;
  PackedStoreReader reader;
  for (const auto& batch : batches) {
    auto model = batchModel(batch, [&](std::size_t i) -> trace::Result<PackedStore> {
      auto read = reader.readWithSummary(batch[i].path);
      if (!read) return read.status();
      summaries.push_back(std::move(read->summary));
      return std::move(read->rows);
    });
    if (!model) return model.status();
    for (Index r = 0; r < model->ranks.size(); ++r) {
      RankFirstPass f;
      f.store = fileName(model->ranks[r].store_path);
      f.has_markers = rankHasIterationMarkers(*model, r, options.iterations);
      f.by_markers = rankIterations(*model, r, options.iterations, true);
      f.by_pattern = rankIterations(*model, r, options.iterations, false);
      f.to_aligned_ns = model->ranks[r].to_aligned_ns;
      f.ops = model->ranks[r].op_count;
      const RankInfo& info = model->ranks[r];
      for (Index t = info.first_thread; t < info.first_thread + info.thread_count; ++t) f.api_calls += model->threads[t].call_count;
      first.push_back(std::move(f));
    }
    unmatched.waits += model->unmatched_events.waits;
    unmatched.syncs += model->unmatched_events.syncs;
  }

  if (load.timings) load.timings->start("summary model");
  std::vector<trace::StoreFile> files;
  for (const auto& batch : batches) files.insert(files.end(), batch.begin(), batch.end());
  LoadOptions summary_load;
  summary_load.clock = load.clock;
  summary_load.unmatched_events_elsewhere = unmatched;
  auto summary = loadPackedRun(files, [&](std::size_t i) { return trace::Result<PackedStore>(std::move(summaries[i])); },
                               summary_load);
  if (!summary) return summary.status();
  summaries = {};
  RunModel& m = *summary;
  std::map<std::string, Index> row_of;
  for (Index r = 0; r < m.ranks.size(); ++r) row_of[fileName(m.ranks[r].store_path)] = r;
  if (row_of.size() != first.size()) return trace::failure("internal: the run's model and its stores' ranks disagree");

  if (load.timings) load.timings->start("combine iterations");
  bool any_marker = false;
  for (const RankFirstPass& f : first) any_marker |= f.has_markers;
  std::vector<RankIterationFacts> facts(m.ranks.size());
  std::vector<std::int64_t> delta(m.ranks.size(), 0);
  std::uint64_t run_ops = 0, run_calls = 0;
  for (RankFirstPass& f : first) {
    const Index row = row_of.at(f.store);
    delta[row] = m.ranks[row].to_aligned_ns - f.to_aligned_ns;
    facts[row] = std::move(any_marker ? f.by_markers : f.by_pattern);
    shift(facts[row], delta[row]);
    run_ops += f.ops, run_calls += f.api_calls;
  }
  auto iterations = combineRankIterations(m, options.iterations, any_marker, std::move(facts));
  if (!iterations) return iterations.status();

  if (load.timings) load.timings->start("second pass: rank metrics");
  std::vector<RankPart> parts(m.ranks.size());
  for (const auto& batch : batches) {
    auto model = batchModel(batch, [&](std::size_t i) { return reader.read(batch[i].path); });
    if (!model) return model.status();
    for (Index r = 0; r < model->ranks.size(); ++r) {
      auto it = row_of.find(fileName(model->ranks[r].store_path));
      if (it == row_of.end()) return trace::failure(model->ranks[r].store_path + " changed while the run was analysed");
      const Index row = it->second;
      shiftRank(*model, r, m.ranks[row].to_aligned_ns - model->ranks[r].to_aligned_ns);
      RankPart part = analyzeRankPart(*model, r, iterations->per_rank[row], options);
      for (RankIterationMetrics& metrics : part.rows) metrics.rank = row;
      for (StreamIdle& s : part.streams) s.stream = s.stream - model->ranks[r].first_stream + m.ranks[row].first_stream;
      for (KernelTally& k : part.kernels) k.name = m.strings.intern(model->str(k.name));
      parts[row] = std::move(part);
    }
  }
  auto analysis = combineRankParts(m, std::move(iterations).value(), std::move(parts), options, load.timings);
  if (!analysis) return analysis.status();
  analysis->run_ops = run_ops, analysis->run_api_calls = run_calls;
  StreamedAnalysis out{std::move(m), std::move(analysis).value(), batches.size()};
  return out;
}

}  // namespace syncopate::analyzer
