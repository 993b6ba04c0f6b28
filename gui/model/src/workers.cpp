#include "syncopate/gui/model/workers.hpp"

#include <QElapsedTimer>
#include <QMetaObject>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

namespace syncopate::gui {

RunLoader::RunLoader(QObject* parent) : QObject(parent) {}

RunLoader::~RunLoader() {
  generation_.next();  // whatever the worker still produces is stale
  task_.waitForFinished();
}

bool RunLoader::busy() const {
  return task_.isRunning();
}

void RunLoader::wait() {
  task_.waitForFinished();
}

std::shared_ptr<const analyzer::Analysis> RunLoader::analysis(std::uint32_t run) const {
  return run < analyses_.size() ? analyses_[run] : nullptr;
}

QString RunLoader::analysisError(std::uint32_t run) const {
  return run < analysis_errors_.size() ? analysis_errors_[run] : QString();
}

void RunLoader::deliver(std::uint64_t generation, std::function<void()> apply) {
  // Runs `apply` on this object's thread, unless a newer load started meanwhile.
  QMetaObject::invokeMethod(
      this, [this, generation, apply = std::move(apply)] {
        if (generation_.isCurrent(generation)) apply();
      },
      Qt::QueuedConnection);
}

std::uint64_t RunLoader::load(std::vector<RunSource> sources) {
  const std::uint64_t gen = generation_.next();
  // The previous worker sees it is stale at its next step; the new one starts after it, so two
  // loads never compete for the two cores.
  QFuture<void> previous = task_;
  task_ = QtConcurrent::run([this, gen, previous, sources = std::move(sources)]() mutable {
    previous.waitForFinished();
    if (!generation_.isCurrent(gen)) return;
    QElapsedTimer since_report;
    since_report.start();
    std::string last_stage;
    const ProgressFn report = [&](std::string_view stage, std::size_t done, std::size_t total) {
      // At most one report per 50 ms, and every change of stage.
      if (stage == last_stage && since_report.elapsed() < 50 && done < total) return;
      since_report.restart();
      last_stage = stage;
      deliver(gen, [this, s = QString::fromUtf8(stage.data(), static_cast<qsizetype>(stage.size())), done, total] {
        emit progress(s, static_cast<qint64>(done), static_cast<qint64>(total));
      });
    };
    std::vector<std::shared_ptr<const LoadedRun>> runs;
    for (std::uint32_t i = 0; i < sources.size(); ++i) {
      if (!generation_.isCurrent(gen)) return;
      const RunSource& src = sources[i];
      auto model = src.load(report);
      if (!generation_.isCurrent(gen)) return;
      trace::Result<std::shared_ptr<LoadedRun>> run =
          model ? prepareRun(std::move(model).value(), i, src.label, report, src.summary) : model.status();
      if (!run) {
        deliver(gen, [this, gen, msg = QString::fromStdString(run.message())] { emit failed(gen, msg); });
        return;
      }
      run.value()->dir = src.dir;
      runs.push_back(std::move(run).value());
    }
    deliver(gen, [this, gen, runs] {
      runs_ = runs;
      analyses_.assign(runs_.size(), nullptr);
      analysis_errors_.assign(runs_.size(), QString());
      emit loaded(gen);
    });
    for (std::uint32_t i = 0; i < runs.size(); ++i) {
      if (!generation_.isCurrent(gen)) return;
      report("Analysing", i, runs.size());
      auto a = analyzeRun(*runs[i]);
      std::shared_ptr<const analyzer::Analysis> result;
      QString error;
      if (a) result = std::make_shared<const analyzer::Analysis>(std::move(a).value());
      else error = QString::fromStdString(a.message());
      deliver(gen, [this, gen, i, result, error] {
        analyses_[i] = result;
        analysis_errors_[i] = error;
        emit analysed(gen, i);
      });
    }
    report("Ready", runs.size(), runs.size());
  });
  return gen;
}

RangeStatsWorker::RangeStatsWorker(QObject* parent) : QObject(parent) {}

RangeStatsWorker::~RangeStatsWorker() {
  generation_.next();
  wait();
}

void RangeStatsWorker::wait() {
  for (auto& t : tasks_) t.waitForFinished();
  tasks_.clear();
}

std::uint64_t RangeStatsWorker::request(std::vector<RunOnView> runs, std::int64_t start, std::int64_t end) {
  const std::uint64_t gen = generation_.next();
  // Finished tasks need no keeping.
  std::erase_if(tasks_, [](const QFuture<void>& f) { return f.isFinished(); });
  tasks_.push_back(QtConcurrent::run([this, gen, runs = std::move(runs), start, end] {
    if (!generation_.isCurrent(gen)) return;
    RangeStatistics stats = computeRangeStatistics(runs, start, end);
    QMetaObject::invokeMethod(
        this, [this, gen, stats = std::move(stats)]() mutable {
          if (!generation_.isCurrent(gen)) return;
          result_ = std::move(stats);
          emit ready(gen);
        },
        Qt::QueuedConnection);
  }));
  return gen;
}

}  // namespace syncopate::gui
