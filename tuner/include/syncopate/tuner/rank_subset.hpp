// Tuning a run too large to model whole from its slowest ranks (docs/tuner.md, "Large runs").
//
// In a data-parallel job every rank runs the same program and a collective ends when its last
// rank arrives, so the iteration is set by the ranks the others wait for. The tuner reads the
// whole run's analysis (DIR/analysis.sqlite), models only those ranks, and takes the absent
// ones to do what the modelled ones do (ModelOptions::absent_ranks_mirror). Each collective's
// timing is the whole run's (every rank's arrival), so the fits see the time a collective ran
// once everyone had arrived, as they do on the whole run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string_view>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/results_reader.hpp"
#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/trace/status.hpp"

namespace syncopate::tuner {

struct RankSubset {
  std::vector<analyzer::Index> rank_rows;  // rows of the whole run, ascending
  std::vector<std::int32_t> ranks;         // their global ranks, in the same order
  std::size_t of = 0;                      // the whole run's ranks
};

// The `count` ranks the others wait for: least mean collective wait per iteration first (the
// rank that arrives last waits least), then the longest mean busy time, then the lower rank
// row. Only ranks with iterations are chosen.
RankSubset slowestRanks(const analyzer::StoredResults& results, std::size_t count);

// The subset's rows, read from their stores in `run_dir` and put on the whole run's clock
// alignment, with their analysis: each collective's timing (its last arrival, and whether every
// rank took part) is the whole run's, from `results`.
struct SubsetRun {
  analyzer::RunModel model;
  analyzer::Analysis analysis;
};
using SubsetProgress = std::function<void(std::string_view what, std::size_t done, std::size_t total)>;
trace::Result<SubsetRun> loadRankSubset(const std::filesystem::path& run_dir, const analyzer::StoredResults& results,
                                        const RankSubset& subset, const analyzer::AnalysisOptions& options,
                                        const SubsetProgress& progress = {});

}  // namespace syncopate::tuner
