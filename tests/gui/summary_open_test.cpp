// A run opened on its analysis results (docs/gui.md, "Opening a large run"): a 16-rank run on
// two hosts whose clocks disagree, analysed as `syncopate analyze` does. The window shows every
// rank collapsed with no ops read and the results' metrics; loading a rank reads that rank's
// store alone and puts its ops exactly where a whole load puts them, keeping the view; a rank
// whose store cannot be read says so and leaves the summary as it was; a run without results
// opens whole in Auto and is refused with the reader's sentence in Summary.
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QtTest>

#include <filesystem>

#include "analysed_run.hpp"
#include "synthetic_run.hpp"
#include "syncopate/gui/widgets/main_window.hpp"

using namespace syncopate;
using namespace syncopate::gui;

namespace {

constexpr int kRanks = 16;

std::filesystem::path runIn(const QTemporaryDir& tmp) { return std::filesystem::path(tmp.path().toStdString()) / "run"; }

// Writes the synthetic run and, when `analysed`, its results; empty or why it failed.
std::string writeRun(const std::filesystem::path& dir, bool analysed) {
  const trace::Status written = synthetic::writeSyntheticRun(
      dir, {.ops = std::int64_t{kRanks} * 2 * synthetic::kOpsPerIteration, .ranks = kRanks, .ranks_per_host = 8});
  if (!written) return written.message();
  if (!analysed) return {};
  auto saved = analyzer::testing::analyseIntoRunDir(dir);
  return saved ? std::string() : saved.message();
}

// The stream lanes of rank row `rank` of run 0: (label, starts), in lane order.
std::vector<std::pair<std::string, std::vector<std::int64_t>>> streamLanes(const TimelineModel& m, analyzer::Index rank) {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> out;
  for (std::uint32_t l = 0; l < m.laneCount(); ++l)
    if (m.lane(l).rank == rank && m.lane(l).kind == LaneKind::Stream) out.emplace_back(m.lane(l).label, m.lane(l).start);
  return out;
}

// Waits for the window's loads and analyses; false when one failed or it took 30 s.
bool waitUntilFinished(MainWindow& w) {
  QElapsedTimer waited;
  waited.start();
  while (!w.finished() && w.lastError().isEmpty() && waited.elapsed() < 30000) QTest::qWait(10);
  return w.finished() && w.lastError().isEmpty();
}

}  // namespace

class SummaryOpenTest : public QObject {
  Q_OBJECT
 private slots:
  void opensOnTheResultsAndLoadsARankWhereAWholeLoadPutsIt() {
    QTemporaryDir tmp;
    const auto dir = runIn(tmp);
    QCOMPARE(writeRun(dir, true), std::string());

    MainWindow whole;
    whole.resize(1400, 900);
    whole.open({dir}, std::nullopt, OpenMode::Full);
    QVERIFY(waitUntilFinished(whole));
    QVERIFY(!whole.model().run(0).summary);

    MainWindow w;
    w.resize(1400, 900);
    w.show();
    w.open({dir}, std::nullopt, OpenMode::Summary);
    QVERIFY(waitUntilFinished(w));
    const LoadedRun& summary = w.model().run(0);
    QVERIFY(summary.summary.has_value());
    QCOMPARE(summary.model.ranks.size(), std::size_t{kRanks});
    QCOMPARE(summary.model.ops.size(), std::size_t{0});
    QCOMPARE(w.model().laneCount(), std::size_t{0});
    for (std::uint32_t g = 0; g < w.model().groupCount(); ++g)
      if (w.model().group(g).kind == GroupKind::Rank) QVERIFY(w.model().collapsed(g));
    // The iterations and metrics are the analysis's, every rank's.
    QCOMPARE(summary.iteration_spans.size(), whole.model().run(0).iteration_spans.size());
    for (std::size_t i = 0; i < summary.iteration_spans.size(); ++i) {
      QCOMPARE(summary.iteration_spans[i].start, whole.model().run(0).iteration_spans[i].start);
      QCOMPARE(summary.iteration_spans[i].end, whole.model().run(0).iteration_spans[i].end);
    }
    QCOMPARE(w.metrics()->table().rowCount(), whole.metrics()->table().rowCount());
    QCOMPARE(w.model().analysis(0)->aggregate.exposed_communication_ns,
             whole.model().analysis(0)->aggregate.exposed_communication_ns);
    // Each rank's strip has the results' shares of its two iterations.
    QCOMPARE(summary.iteration_shares[3].size(), std::size_t{2});
    QVERIFY(summary.iteration_shares[3][0].exposed > 0);

    // Expanding rank row 9 (second host) reads its store alone; the view stays where it was.
    const int group = w.model().rankGroup(0, 9);
    QVERIFY(group >= 0);
    const double start = w.timeline()->axis().startNs(), end = w.timeline()->axis().endNs();
    w.model().setCollapsed(static_cast<std::uint32_t>(group), false);
    QVERIFY(w.loadRankRows(0, 9));
    QVERIFY(!w.loadRankRows(0, 9));  // asked again while it loads: nothing more to read
    QVERIFY(waitUntilFinished(w));
    const LoadedRun& more = w.model().run(0);
    QVERIFY(more.rowsLoaded(9));
    QVERIFY(!more.rowsLoaded(3));
    QCOMPARE(more.model.ops.size(), std::size_t{whole.model().run(0).model.ranks[9].op_count});
    QVERIFY(streamLanes(w.model(), 9) == streamLanes(whole.model(), 9));
    QVERIFY(!streamLanes(w.model(), 9).empty());
    QVERIFY(!w.model().collapsed(static_cast<std::uint32_t>(w.model().rankGroup(0, 9))));
    QVERIFY(w.model().collapsed(static_cast<std::uint32_t>(w.model().rankGroup(0, 3))));
    QCOMPARE(w.timeline()->axis().startNs(), start);
    QCOMPARE(w.timeline()->axis().endNs(), end);
    QVERIFY(!w.loadRankRows(0, 9));  // already loaded
  }

  void aRankWhoseStoreCannotBeReadLeavesTheSummaryAsItWas() {
    QTemporaryDir tmp;
    const auto dir = runIn(tmp);
    QCOMPARE(writeRun(dir, true), std::string());
    // Damaged after the analysis, its time kept (as a copy that keeps times would): the summary
    // opens, the rank's own rows cannot be read.
    const auto store = dir / "rank-5.sqlite";
    const auto written = std::filesystem::last_write_time(store);
    std::filesystem::resize_file(store, 100);
    std::filesystem::last_write_time(store, written);
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    w.open({dir}, std::nullopt, OpenMode::Summary);
    QVERIFY(waitUntilFinished(w));
    const int group = w.model().rankGroup(0, 5);
    QVERIFY(group >= 0);
    w.model().setCollapsed(static_cast<std::uint32_t>(group), false);
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    QVERIFY(w.loadRankRows(0, 5));
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
    QVERIFY2(w.lastError().contains("rank-5.sqlite"), qPrintable(w.lastError()));
    QVERIFY(w.finished());
    QVERIFY(w.model().run(0).summary.has_value());
    QVERIFY(!w.model().run(0).rowsLoaded(5));
    QVERIFY(w.model().collapsed(static_cast<std::uint32_t>(w.model().rankGroup(0, 5))));
    // The others still load, and the broken one may be asked for again.
    QVERIFY(w.loadRankRows(0, 6));
    QVERIFY(waitUntilFinished(w));
    QVERIFY(w.model().run(0).rowsLoaded(6));
    QVERIFY(!w.model().run(0).rowsLoaded(5));
    QVERIFY(w.loadRankRows(0, 5));
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 2, 30000);
    QVERIFY(w.model().run(0).rowsLoaded(6));
  }

  void aRunWithoutResultsOpensWholeInAutoAndIsRefusedInSummary() {
    QTemporaryDir tmp;
    const auto dir = runIn(tmp);
    QCOMPARE(writeRun(dir, false), std::string());
    auto automatic = openDirectory(dir, OpenMode::Auto);
    QVERIFY(automatic.ok());
    QVERIFY(!automatic->summary);

    MainWindow w;
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.open({dir}, std::nullopt, OpenMode::Summary);
    QCOMPARE(failed.count(), 1);
    QCOMPARE(w.lastError().toStdString(),
             dir.string() + " has no analysis.sqlite: run 'syncopate analyze " + dir.string() + "' first");
  }
};

QTEST_MAIN(SummaryOpenTest)
#include "summary_open_test.moc"
