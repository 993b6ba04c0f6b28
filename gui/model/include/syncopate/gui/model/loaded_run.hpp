// A run as the GUI holds it: the analyzer's model of the run directory, its iterations, the
// activity sets behind the per-rank exposed-communication / idle strip, and its lanes with
// their level-of-detail summaries. Built once on a loader worker, then shared read-only.
// The analyzer's full Analysis comes later, separately (RunLoader::analysed), so that the
// timeline can paint before metrics and critical paths are ready.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/intervals.hpp"
#include "syncopate/analyzer/iterations.hpp"
#include "syncopate/analyzer/metrics.hpp"
#include "syncopate/analyzer/results_reader.hpp"
#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/gui/model/lanes.hpp"

namespace syncopate::gui {

// An iteration across the ranks of a run: earliest GPU start to latest GPU end (aligned ns).
struct IterationSpan {
  std::int64_t number = 0;
  std::int64_t start = 0, end = 0;
};

// A run opened on its analysis results (DIR/analysis.sqlite) rather than on every store: the
// results give its iterations, metrics and strips, and only some ranks' rows are read (those
// whose lanes were expanded). docs/gui.md, "Opening a large run".
struct RunSummary {
  std::shared_ptr<const analyzer::StoredResults> results;
  std::vector<bool> rows_loaded;  // by rank row: whether the model holds the rank's rows
};

// One iteration of a rank whose rows are not loaded, as its strip shows it: the shares of the
// window in which the results say communication was exposed and the GPU idle.
struct IterationShare {
  std::int64_t start = 0, end = 0;
  double exposed = 0, idle = 0;
};

struct LoadedRun {
  std::filesystem::path dir;  // empty for runs built in memory
  std::string label;          // how the timeline names the run
  analyzer::RunModel model;
  // model.beginNs() / endNs(), kept: the model scans every table to find them.
  std::int64_t begin_ns = 0, end_ns = 0;
  analyzer::Iterations iterations;
  std::vector<IterationSpan> iteration_spans;    // by number
  std::vector<analyzer::RankActivity> activity;  // index: rank row
  std::vector<analyzer::IntervalSet> exposed;    // communication not overlapped by compute, per rank row
  // Per rank row, the time its strip measures idle in: the recording window when the store
  // knows it and it covers the rank's rows, else the extent of the rank's rows.
  std::vector<analyzer::Interval> rank_window;
  RunLanes lanes;
  // Set for a run opened on its summary; then, by rank row, the iterations of the ranks whose
  // rows are not loaded (empty for the others).
  std::optional<RunSummary> summary;
  std::vector<std::vector<IterationShare>> iteration_shares;

  const IterationSpan* iteration(std::int64_t number) const;
  // Whether the model holds the rows of `rank` (always, for a run loaded whole).
  bool rowsLoaded(Index rank) const { return !summary || summary->rows_loaded[rank]; }
};

// Progress of a long step: `done` of `total` units of the stage named `stage`.
using ProgressFn = std::function<void(std::string_view stage, std::size_t done, std::size_t total)>;

// Everything LoadedRun holds beyond the model: iterations, activity, lanes and their LOD.
// `run` is the run's position in the view (0, or 1 for the second run of a comparison). With a
// summary, the iterations are the results' rather than found again in a model that holds only
// some ranks' rows.
trace::Result<std::shared_ptr<LoadedRun>> prepareRun(analyzer::RunModel model, std::uint32_t run,
                                                     std::string label, const ProgressFn& progress = {},
                                                     std::optional<RunSummary> summary = std::nullopt);

// Loads a run directory with the analyzer's loader, then prepareRun. Fails with the
// analyzer's sentence (missing directory, no store, a corrupt or unknown-version store).
trace::Result<std::shared_ptr<LoadedRun>> loadRunDirectory(const std::filesystem::path& dir, std::uint32_t run,
                                                           const ProgressFn& progress = {});

// The analyzer's analysis of a prepared run (metrics, collectives, critical paths); of a run
// opened on its summary, the stored results' (metrics only: no critical paths or collectives).
trace::Result<analyzer::Analysis> analyzeRun(const LoadedRun& run);

}  // namespace syncopate::gui
