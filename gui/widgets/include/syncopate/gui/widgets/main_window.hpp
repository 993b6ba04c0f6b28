// The application window: the timeline in the middle, docks for details, range statistics,
// metrics, recommendations and diagnostics, a toolbar for fitting and jumping to iterations,
// and a status bar showing loading progress. Runs load on a worker (RunLoader); a run that
// cannot be opened shows an error dialog and leaves the window usable.
#pragma once

#include <QLabel>
#include <QMainWindow>
#include <QProgressBar>
#include <QSpinBox>
#include <QTextBrowser>

#include <array>
#include <filesystem>
#include <optional>
#include <vector>

#include "syncopate/gui/model/plan_summary.hpp"
#include "syncopate/gui/model/timeline_model.hpp"
#include "syncopate/gui/model/workers.hpp"
#include "syncopate/gui/widgets/details_panel.hpp"
#include "syncopate/gui/widgets/metrics_panel.hpp"
#include "syncopate/gui/widgets/range_stats_panel.hpp"
#include "syncopate/gui/widgets/recommendations_panel.hpp"
#include "syncopate/gui/widgets/timeline_widget.hpp"

namespace syncopate::gui {

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens one run directory, or two to compare (aligned on `iteration`, else on the first
  // iteration both have), and shows `iteration` (else the first) with its critical path.
  // `mode` says whether a large run opens on its analysis results (workers.hpp, OpenMode).
  void open(const std::vector<std::filesystem::path>& dirs, std::optional<std::int64_t> iteration = std::nullopt,
            OpenMode mode = OpenMode::Auto);
  void openSources(std::vector<RunSource> sources, std::optional<std::int64_t> iteration = std::nullopt);
  // Reads the rows of rank row `rank` of run `run` when the run was opened on its summary and
  // they are not loaded yet (what expanding the rank's group does); the view stays where it is.
  // False when there is nothing to read.
  bool loadRankRows(std::uint32_t run, Index rank);

  // True once the runs are on the timeline and every analysis has arrived (or failed).
  bool finished() const { return finished_; }
  const QString& lastError() const { return last_error_; }
  // Shows iteration `number` and its critical path; false when no run has it.
  bool showIteration(std::int64_t number);
  // Shows or hides every lane of a kind (the toolbar's Threads / NVTX / Streams toggles).
  void setLaneKindShown(LaneKind kind, bool shown);

  TimelineModel& model() { return model_; }
  const TimelineModel& model() const { return model_; }
  TimelineWidget* timeline() { return timeline_; }
  RunLoader& loader() { return loader_; }
  MetricsPanel* metrics() { return metrics_; }
  RecommendationsPanel* recommendations() { return recommendations_; }
  DetailsPanel* details() { return details_; }
  RangeStatsPanel* rangeStats() { return range_stats_; }

 signals:
  void runsShown();       // the timeline shows the runs (first paint can happen)
  void finishedLoading(); // every analysis arrived
  void loadFailed(const QString& message);

 private:
  void buildToolbar();
  void onLoaded(quint64 generation);
  void onAnalysed(quint64 generation, quint32 run);
  void onFailed(quint64 generation, const QString& message);
  void showLoadedRuns();  // the first time the runs arrive: fit the iteration, reset the view
  void collapseRanksWithoutRows();
  void updateRecommendations();
  void updateDiagnostics();
  void updateCriticalPath();

  TimelineModel model_;
  RunLoader loader_;
  RangeStatsWorker range_worker_;
  std::vector<std::pair<std::uint32_t, PlanWatcher*>> plan_watchers_;  // run, its directory's watcher
  std::vector<RunSource> sources_;  // of the runs on view, to load more of a summary's rows
  std::vector<RunSource> shown_sources_;  // those of the runs on view (sources_ runs ahead while they load)
  bool replacing_runs_ = false;     // the load in flight brings the same runs with more rows
  QString summary_note_;            // what the status bar says of runs opened on their summary
  TimelineWidget* timeline_;
  DetailsPanel* details_;
  RangeStatsPanel* range_stats_;
  MetricsPanel* metrics_;
  RecommendationsPanel* recommendations_;
  QTextBrowser* diagnostics_;
  QSpinBox* iteration_box_;
  QAction* critical_path_action_;
  std::array<QAction*, 4> lane_kind_actions_{};  // index: LaneKind
  QProgressBar* progress_;
  QLabel* status_;
  std::optional<std::int64_t> requested_iteration_;
  std::optional<std::int64_t> shown_iteration_;
  std::size_t analyses_pending_ = 0;
  bool finished_ = false;
  QString last_error_;
};

}  // namespace syncopate::gui
