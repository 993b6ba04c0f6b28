// Work that runs off the UI thread, and the rule that keeps its results honest: every request
// takes a new generation number, and a result is delivered only if its generation is still the
// latest when it arrives (KDAB Hotspot's habit). Loading a second run while the first is still
// loading, or selecting a new range before the last range's statistics are ready, simply makes
// the older work stale; its result is dropped on arrival.
#pragma once

#include <QFuture>
#include <QObject>
#include <QString>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/gui/model/loaded_run.hpp"
#include "syncopate/gui/model/range_stats.hpp"
#include "syncopate/gui/model/timeline_model.hpp"

namespace syncopate::gui {

class Generation {
 public:
  std::uint64_t next() { return ++value_; }
  std::uint64_t current() const { return value_.load(); }
  bool isCurrent(std::uint64_t g) const { return value_.load() == g; }

 private:
  std::atomic<std::uint64_t> value_{0};
};

// Where a run comes from: a function that produces its model on a worker (reporting progress).
struct RunSource {
  std::string label;
  std::filesystem::path dir;  // empty for in-memory sources
  std::function<trace::Result<analyzer::RunModel>(const ProgressFn&)> load;
  // Set when the run opens on its analysis results: `load` then reads the rows of the ranks
  // the summary names, and the iterations and metrics are the results'.
  std::optional<RunSummary> summary;
};
// A run directory, every store read with the analyzer's loader (loaded_run.hpp).
RunSource directorySource(const std::filesystem::path& dir);
// A run directory opened on its analysis results: the rows of the ranks `summary` names, each
// put on the results' time axis (their clock alignment, made from every rank).
RunSource summarySource(const std::filesystem::path& dir, RunSummary summary);

// How `syncopate gui` opens a directory: on its analysis results when its stores are larger
// than kSummaryAboveBytes and the results are of those stores (Auto), always on its results
// (Summary; fails with the reader's sentence without them), or every store (Full).
enum class OpenMode : std::uint8_t { Auto, Summary, Full };
inline constexpr std::uintmax_t kSummaryAboveBytes = 256ull << 20;
trace::Result<RunSource> openDirectory(const std::filesystem::path& dir, OpenMode mode);

// Loads runs on a worker: each source's model, then prepareRun (lanes, LOD, activity), then
// `loaded`; then the analyzer's analysis of each run, one `analysed` per run.
class RunLoader : public QObject {
  Q_OBJECT
 public:
  explicit RunLoader(QObject* parent = nullptr);
  ~RunLoader() override;  // waits for the worker

  // Starts loading (one source, or two to compare); anything in flight becomes stale.
  std::uint64_t load(std::vector<RunSource> sources);
  std::uint64_t generation() const { return generation_.current(); }
  bool busy() const;

  // Valid after `loaded` / `analysed` of the current generation.
  const std::vector<std::shared_ptr<const LoadedRun>>& runs() const { return runs_; }
  std::shared_ptr<const analyzer::Analysis> analysis(std::uint32_t run) const;
  QString analysisError(std::uint32_t run) const;

  // Blocks until the worker of the current generation has finished (tests, screenshots).
  void wait();

 signals:
  void progress(const QString& stage, qint64 done, qint64 total);
  void loaded(quint64 generation);
  void analysed(quint64 generation, quint32 run);
  void failed(quint64 generation, const QString& message);

 private:
  void deliver(std::uint64_t generation, std::function<void()> apply);
  Generation generation_;
  QFuture<void> task_;
  std::vector<std::shared_ptr<const LoadedRun>> runs_;
  std::vector<std::shared_ptr<const analyzer::Analysis>> analyses_;
  std::vector<QString> analysis_errors_;
};

// Statistics of the selected range, computed on a worker; only the latest request's result
// is delivered.
class RangeStatsWorker : public QObject {
  Q_OBJECT
 public:
  explicit RangeStatsWorker(QObject* parent = nullptr);
  ~RangeStatsWorker() override;

  std::uint64_t request(std::vector<RunOnView> runs, std::int64_t start, std::int64_t end);
  // Makes any request in flight stale (the selection was cleared).
  void cancel() { generation_.next(); }
  const RangeStatistics& result() const { return result_; }
  void wait();

 signals:
  void ready(quint64 generation);

 private:
  Generation generation_;
  std::vector<QFuture<void>> tasks_;
  RangeStatistics result_;
};

}  // namespace syncopate::gui
