#include "syncopate/gui/widgets/main_window.hpp"

#include <QDockWidget>
#include <QMessageBox>
#include <QStatusBar>
#include <QToolBar>

#include <limits>
#include <utility>

#include "syncopate/gui/model/critical_path_overlay.hpp"

namespace syncopate::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(QStringLiteral("Syncopate"));
  timeline_ = new TimelineWidget(&model_, this);
  setCentralWidget(timeline_);

  auto dock = [this](const QString& title, QWidget* w, Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, this);
    d->setObjectName(title);
    d->setWidget(w);
    addDockWidget(area, d);
    return d;
  };
  details_ = new DetailsPanel(&model_, this);
  range_stats_ = new RangeStatsPanel(this);
  metrics_ = new MetricsPanel(&model_, this);
  recommendations_ = new RecommendationsPanel(this);
  diagnostics_ = new QTextBrowser(this);
  QDockWidget* details_dock = dock(QStringLiteral("Details"), details_, Qt::RightDockWidgetArea);
  QDockWidget* range_dock = dock(QStringLiteral("Range statistics"), range_stats_, Qt::RightDockWidgetArea);
  tabifyDockWidget(details_dock, range_dock);
  details_dock->raise();
  QDockWidget* metrics_dock = dock(QStringLiteral("Metrics"), metrics_, Qt::BottomDockWidgetArea);
  QDockWidget* rec_dock = dock(QStringLiteral("Recommendations"), recommendations_, Qt::BottomDockWidgetArea);
  QDockWidget* diag_dock = dock(QStringLiteral("Diagnostics"), diagnostics_, Qt::BottomDockWidgetArea);
  tabifyDockWidget(metrics_dock, rec_dock);
  tabifyDockWidget(rec_dock, diag_dock);
  metrics_dock->raise();
  resizeDocks({details_dock}, {320}, Qt::Horizontal);
  resizeDocks({metrics_dock}, {230}, Qt::Vertical);

  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(260);
  progress_->hide();
  status_ = new QLabel(this);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  buildToolbar();

  connect(&loader_, &RunLoader::progress, this, [this](const QString& stage, qint64 done, qint64 total) {
    progress_->show();
    progress_->setFormat(stage + QStringLiteral(" %p%"));
    progress_->setRange(0, total > 0 ? 1000 : 0);
    if (total > 0) progress_->setValue(static_cast<int>(1000 * done / total));
  });
  connect(&loader_, &RunLoader::loaded, this, &MainWindow::onLoaded);
  connect(&loader_, &RunLoader::analysed, this, &MainWindow::onAnalysed);
  connect(&loader_, &RunLoader::failed, this, &MainWindow::onFailed);

  connect(timeline_, &TimelineWidget::itemSelected, this, [this](const ItemRef& item) {
    details_->showItem(item);
    details_->parentWidget()->raise();
  });
  connect(timeline_, &TimelineWidget::blockSelected, details_, &DetailsPanel::showBlock);
  connect(timeline_, &TimelineWidget::selectionCleared, this, [this] {
    details_->showNothing();
    range_stats_->showNothing();
    range_worker_.cancel();
  });
  connect(timeline_, &TimelineWidget::rangeSelected, this, [this](qint64 start, qint64 end) {
    range_stats_->showPending(start, end);
    range_stats_->parentWidget()->raise();
    range_worker_.request(model_.runsOnView(), start, end);
  });
  connect(&range_worker_, &RangeStatsWorker::ready, this, [this] { range_stats_->showStatistics(range_worker_.result()); });
  connect(timeline_, &TimelineWidget::groupToggled, this, [this](quint32 g, bool collapsed) {
    const LaneGroup& group = model_.group(g);
    if (!collapsed && group.kind == GroupKind::Rank) loadRankRows(group.run, group.rank);
  });
  connect(details_, &DetailsPanel::navigate, timeline_, &TimelineWidget::selectItem);
  connect(metrics_, &MetricsPanel::jumpTo, this, [this](const JumpTarget& t) {
    timeline_->fitRange(t.start, t.end);
    const int group = model_.rankGroup(t.run, t.rank);
    if (group >= 0) timeline_->scrollToRow(model_.rowOfGroup(static_cast<std::uint32_t>(group)));
    shown_iteration_ = t.iteration;
    iteration_box_->setValue(static_cast<int>(t.iteration));
    updateCriticalPath();
  });
}

MainWindow::~MainWindow() {
  // The views read model_, which as a member dies before QWidget deletes its children (a
  // closing table still asks its model for sizes): delete the views first.
  delete takeCentralWidget();
  for (QDockWidget* d : findChildren<QDockWidget*>()) delete d;
}

void MainWindow::buildToolbar() {
  QToolBar* bar = addToolBar(QStringLiteral("View"));
  bar->setObjectName(QStringLiteral("View"));
  QAction* fit = bar->addAction(QStringLiteral("Fit run"), timeline_, &TimelineWidget::fitAll);
  fit->setShortcut(Qt::Key_Home);
  bar->addSeparator();
  bar->addWidget(new QLabel(QStringLiteral(" Iteration "), bar));
  iteration_box_ = new QSpinBox(bar);
  iteration_box_->setRange(0, 0);
  iteration_box_->setEnabled(false);
  bar->addWidget(iteration_box_);
  QAction* go = bar->addAction(QStringLiteral("Go"), this, [this] { showIteration(iteration_box_->value()); });
  go->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
  connect(iteration_box_, &QSpinBox::editingFinished, go, &QAction::trigger);
  bar->addAction(QStringLiteral("Previous"), this, [this] {
    if (shown_iteration_) showIteration(*shown_iteration_ - 1);
  });
  bar->addAction(QStringLiteral("Next"), this, [this] {
    if (shown_iteration_) showIteration(*shown_iteration_ + 1);
  });
  bar->addSeparator();
  critical_path_action_ = bar->addAction(QStringLiteral("Critical path"), this, [this] { updateCriticalPath(); });
  critical_path_action_->setCheckable(true);
  critical_path_action_->setChecked(true);
  bar->addSeparator();
  const std::pair<LaneKind, QString> kinds[] = {{LaneKind::Thread, QStringLiteral("Threads")},
                                                {LaneKind::Ranges, QStringLiteral("NVTX")},
                                                {LaneKind::Stream, QStringLiteral("Streams")}};
  for (const auto& [kind, name] : kinds) {
    QAction* a = bar->addAction(name);
    a->setCheckable(true);
    a->setChecked(true);
    a->setToolTip(QStringLiteral("Show %1 lanes").arg(name));
    connect(a, &QAction::toggled, this, [this, k = kind](bool on) { setLaneKindShown(k, on); });
    lane_kind_actions_[static_cast<std::size_t>(kind)] = a;
  }
  bar->addSeparator();
  bar->addAction(QStringLiteral("Collapse ranks"), this, [this] {
    model_.setAllRanksCollapsed(true);
    timeline_->modelChanged();
  });
  bar->addAction(QStringLiteral("Expand ranks"), this, [this] {
    model_.setAllRanksCollapsed(false);
    timeline_->modelChanged();
  });
}

void MainWindow::open(const std::vector<std::filesystem::path>& dirs, std::optional<std::int64_t> iteration, OpenMode mode) {
  std::vector<RunSource> sources;
  for (const auto& d : dirs) {
    auto source = openDirectory(d, mode);
    if (!source) {
      replacing_runs_ = false;  // whatever a rank was loading for, this is about the new runs
      onFailed(loader_.generation(), QString::fromStdString(source.message()));
      return;
    }
    sources.push_back(std::move(source).value());
  }
  openSources(std::move(sources), iteration);
}

bool MainWindow::loadRankRows(std::uint32_t run, Index rank) {
  if (run >= sources_.size() || !sources_[run].summary) return false;
  RunSummary summary = *sources_[run].summary;
  if (rank >= summary.rows_loaded.size() || summary.rows_loaded[rank]) return false;
  summary.rows_loaded[rank] = true;
  const std::int32_t number = summary.results->ranks[rank].rank;
  sources_[run] = summarySource(sources_[run].dir, std::move(summary));
  replacing_runs_ = true;
  finished_ = false;
  last_error_.clear();
  status_->setText(QStringLiteral("Loading the ops of rank %1 …").arg(number));
  loader_.load(sources_);
  return true;
}

void MainWindow::openSources(std::vector<RunSource> sources, std::optional<std::int64_t> iteration) {
  requested_iteration_ = iteration;
  finished_ = false;
  last_error_.clear();
  for (auto& [run, w] : plan_watchers_) w->deleteLater();
  plan_watchers_.clear();
  QStringList names;
  for (const RunSource& s : sources) names << QString::fromStdString(s.label);
  status_->setText(QStringLiteral("Loading %1 …").arg(names.join(QStringLiteral(" and "))));
  setWindowTitle(QStringLiteral("Syncopate — %1").arg(names.join(QStringLiteral(" vs "))));
  for (std::uint32_t run = 0; run < sources.size(); ++run) {
    if (sources[run].dir.empty()) continue;
    auto* w = new PlanWatcher(this);
    connect(w, &PlanWatcher::changed, this, &MainWindow::updateRecommendations);
    plan_watchers_.emplace_back(run, w);
    w->watch(sources[run].dir);
  }
  sources_ = sources;
  replacing_runs_ = false;
  loader_.load(std::move(sources));
}

void MainWindow::collapseRanksWithoutRows() {
  for (std::uint32_t g = 0; g < model_.groupCount(); ++g) {
    const LaneGroup& group = model_.group(g);
    if (group.kind == GroupKind::Rank && !model_.run(group.run).rowsLoaded(group.rank)) model_.setCollapsed(g, true);
  }
}

void MainWindow::onLoaded(quint64) {
  // A summary's rank loaded: the same groups, kept as the user left them.
  std::vector<bool> collapsed;
  if (replacing_runs_)
    for (std::uint32_t g = 0; g < model_.groupCount(); ++g) collapsed.push_back(model_.collapsed(g));
  model_.setRuns(loader_.runs());
  shown_sources_ = sources_;
  if (model_.runCount() > 1) model_.alignRunsOnIteration(requested_iteration_);
  analyses_pending_ = model_.runCount();
  if (std::exchange(replacing_runs_, false) && collapsed.size() == model_.groupCount()) {
    for (std::uint32_t g = 0; g < model_.groupCount(); ++g) model_.setCollapsed(g, collapsed[g]);
    timeline_->runsReplaced();
  } else {
    collapseRanksWithoutRows();
    showLoadedRuns();
  }
  metrics_->refresh({});
  updateDiagnostics();
  updateRecommendations();
  std::size_t ops = 0, ranks = 0, ranks_with_rows = 0;
  for (std::uint32_t r = 0; r < model_.runCount(); ++r) {
    const LoadedRun& run = model_.run(r);
    ops += run.model.ops.size();
    ranks += run.model.ranks.size();
    for (Index k = 0; k < run.model.ranks.size(); ++k) ranks_with_rows += run.rowsLoaded(k) ? 1 : 0;
  }
  summary_note_.clear();
  if (ranks_with_rows < ranks)
    summary_note_ = QStringLiteral("opened on its analysis results: the ops of %1 of %2 ranks are loaded (expand a rank to load its ops)")
                        .arg(ranks_with_rows)
                        .arg(ranks);
  status_->setText(QStringLiteral("%1 ops on %2 lanes · %3").arg(ops).arg(model_.laneCount())
                       .arg(summary_note_.isEmpty() ? QStringLiteral("analysing …") : summary_note_));
  emit runsShown();
}

void MainWindow::showLoadedRuns() {
  timeline_->modelReset();

  // The iteration box spans the iteration numbers of the runs.
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
  for (std::uint32_t r = 0; r < model_.runCount(); ++r) {
    for (const IterationSpan& s : model_.run(r).iteration_spans) {
      lo = std::min(lo, s.number);
      hi = std::max(hi, s.number);
    }
  }
  iteration_box_->setEnabled(lo <= hi);
  if (lo <= hi) iteration_box_->setRange(static_cast<int>(lo), static_cast<int>(hi));

  if (requested_iteration_ ? showIteration(*requested_iteration_) : (lo <= hi && showIteration(lo))) {
    // showIteration fitted the view
  } else {
    timeline_->fitAll();
  }
}

void MainWindow::onAnalysed(quint64, quint32 run) {
  model_.setAnalysis(run, loader_.analysis(run));
  QStringList errors;
  for (std::uint32_t r = 0; r < model_.runCount(); ++r) {
    if (!loader_.analysisError(r).isEmpty()) {
      errors << QStringLiteral("%1: %2").arg(QString::fromStdString(model_.run(r).label), loader_.analysisError(r));
    }
  }
  metrics_->refresh(errors.join(QLatin1Char('\n')));
  timeline_->modelChanged();
  updateCriticalPath();
  updateRecommendations();
  if (analyses_pending_ > 0 && --analyses_pending_ == 0) {
    finished_ = true;
    progress_->hide();
    status_->setText(!errors.isEmpty()        ? errors.join(QStringLiteral("; "))
                     : summary_note_.isEmpty() ? QStringLiteral("Ready.")
                                               : QStringLiteral("Ready: ") + summary_note_ + QLatin1Char('.'));
    emit finishedLoading();
  }
}

void MainWindow::onFailed(quint64, const QString& message) {
  last_error_ = message;
  progress_->hide();
  const bool rank_rows = std::exchange(replacing_runs_, false);
  if (rank_rows) {
    // The runs on view stay, as they were: the ranks asked for since collapse again and can be
    // asked for again.
    sources_ = shown_sources_;
    collapseRanksWithoutRows();
    timeline_->modelChanged();
    finished_ = true;
  }
  status_->setText(rank_rows ? QStringLiteral("Could not read the rank's ops.") : QStringLiteral("Could not open the run."));
  auto* box = new QMessageBox(QMessageBox::Critical,
                              rank_rows ? QStringLiteral("Cannot read the rank's ops") : QStringLiteral("Cannot open the run"),
                              message, QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("loadErrorDialog"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
  emit loadFailed(message);
}

bool MainWindow::showIteration(std::int64_t number) {
  if (!timeline_->fitIteration(number)) return false;
  shown_iteration_ = number;
  if (iteration_box_->value() != number) iteration_box_->setValue(static_cast<int>(number));
  updateCriticalPath();
  return true;
}

void MainWindow::setLaneKindShown(LaneKind kind, bool shown) {
  model_.setLaneKindShown(kind, shown);
  if (QAction* a = lane_kind_actions_[static_cast<std::size_t>(kind)]; a && a->isChecked() != shown) a->setChecked(shown);
  timeline_->modelChanged();
}

void MainWindow::updateCriticalPath() {
  std::vector<PathMark> marks;
  if (critical_path_action_->isChecked() && shown_iteration_) {
    for (std::uint32_t r = 0; r < model_.runCount(); ++r) {
      auto run_marks = criticalPathMarks(model_, r, *shown_iteration_);
      if (!run_marks) continue;
      if (!marks.empty()) marks.push_back({});  // a mark on no lane: the runs' paths are not joined
      marks.insert(marks.end(), run_marks->begin(), run_marks->end());
    }
  }
  timeline_->setCriticalPath(std::move(marks));
}

void MainWindow::updateRecommendations() {
  // The baseline is the run `syncopate tune` wrote tune.json into (`syncopate run` copies only
  // plan.json into the tuned run), else the first run holding the tuner's files; the other run
  // of a comparison is the one that applied the plan. A run without tune.json whose job applied
  // the plan (its runtime reports are there) is the tuned run, and the other one the baseline.
  const PlanWatcher* chosen = nullptr;
  std::uint32_t baseline_run = 0;
  for (const auto& [run, w] : plan_watchers_) {
    if (w->tune() && (!chosen || !chosen->tune())) chosen = w, baseline_run = run;
    if (!chosen && (w->plan() || !w->error().empty())) chosen = w, baseline_run = run;
  }
  if (!chosen) {
    recommendations_->showPlan(nullptr, nullptr, {}, nullptr, nullptr);
    return;
  }
  const analyzer::Analysis* baseline = model_.analysis(baseline_run);
  const analyzer::Analysis* tuned = model_.runCount() > 1 ? model_.analysis(baseline_run == 0 ? 1 : 0) : nullptr;
  if (!chosen->tune() && chosen->appliedPlan()) std::swap(baseline, tuned);
  recommendations_->showPlan(chosen->plan() ? &*chosen->plan() : nullptr, chosen->tune() ? &*chosen->tune() : nullptr,
                             QString::fromStdString(chosen->error()), baseline, tuned);
}

void MainWindow::updateDiagnostics() {
  QString out;
  for (std::uint32_t r = 0; r < model_.runCount(); ++r) {
    const LoadedRun& run = model_.run(r);
    out += QStringLiteral("<h4>%1</h4><ul>").arg(QString::fromStdString(run.label).toHtmlEscaped());
    out += QStringLiteral("<li>iterations: %1 (%2)</li>")
               .arg(run.iteration_spans.size())
               .arg(QString::fromUtf8(analyzer::toString(run.iterations.source).data()));
    for (const std::string& note : run.iterations.notes) out += QStringLiteral("<li>%1</li>").arg(QString::fromStdString(note).toHtmlEscaped());
    for (const auto& d : run.model.diagnostics) {
      out += QStringLiteral("<li>[%1] %2: %3%4</li>")
                 .arg(QString::fromUtf8(trace::toString(d.severity).data()), QString::fromStdString(d.source).toHtmlEscaped(),
                      QString::fromStdString(d.message).toHtmlEscaped(),
                      d.count > 1 ? QStringLiteral(" (×%1)").arg(d.count) : QString());
    }
    out += QStringLiteral("</ul>");
  }
  diagnostics_->setHtml(out);
}

}  // namespace syncopate::gui
