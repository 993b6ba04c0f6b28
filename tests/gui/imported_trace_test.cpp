// A real two-rank PyTorch profiler trace (HTA's trace_filter test data, read in place from
// ../shared/traces), imported with the analyzer's Kineto importer and opened in the window: the
// screenshot has a group per rank, lanes for its threads and streams, and every op wide enough
// to see is drawn in its kind's colour.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "drawn_ops.hpp"
#include "enum_compare.hpp"
#include "syncopate/analyzer/importers.hpp"
#include "syncopate/gui/widgets/main_window.hpp"

using namespace syncopate::gui;

class ImportedTraceTest : public QObject {
  Q_OBJECT
 private slots:
  void realTraceShowsEveryRankWithColoursWhereOpsAre() {
    const std::filesystem::path traces = SYNCOPATE_SHARED_TRACES "/kineto/trace_filter";
    // Missing data fails the test: a skip would report as checked what was not.
    QVERIFY2(std::filesystem::exists(traces),
             (traces.string() + " is missing: this test reads the shared folder beside the repository in place").c_str());
    QTemporaryDir tmp;
    const std::filesystem::path dir = std::filesystem::path(tmp.path().toStdString()) / "imported";
    const std::vector<std::filesystem::path> files = {traces / "sampled_rank-0.json.gz", traces / "sampled_rank-1.json.gz"};
    auto imported = syncopate::analyzer::importKineto(files, dir);
    QVERIFY2(imported.ok(), imported.ok() ? "" : imported.message().c_str());

    MainWindow w;
    w.resize(1600, 1200);
    w.show();
    QSignalSpy done(&w, &MainWindow::finishedLoading);
    w.open({dir});
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 30000);
    const TimelineModel& m = w.model();
    QCOMPARE(m.run(0).model.ranks.size(), std::size_t{2});
    QVERIFY(m.rankGroup(0, 0) >= 0 && m.rankGroup(0, 1) >= 0);
    // Both ranks have host-thread lanes and stream lanes, and every op is on a lane.
    std::size_t ops_on_lanes = 0;
    for (syncopate::analyzer::Index r = 0; r < 2; ++r) {
      bool thread = false, stream = false;
      for (std::uint32_t l : m.group(static_cast<std::uint32_t>(m.rankGroup(0, r))).lanes) {
        thread |= m.lane(l).kind == LaneKind::Thread;
        stream |= m.lane(l).kind == LaneKind::Stream;
        if (m.lane(l).kind == LaneKind::Stream) ops_on_lanes += m.lane(l).size();
      }
      QVERIFY(thread);
      QVERIFY(stream);
    }
    QCOMPARE(ops_on_lanes, m.run(0).model.ops.size());

    const syncopate::gui::testing::DrawnOps drawn = syncopate::gui::testing::checkDrawnOps(w);
    QVERIFY2(drawn.failure.empty(), drawn.failure.c_str());
    const int checked = drawn.checked, communication = drawn.communication;
    QVERIFY2(checked >= 10, qPrintable(QString("only %1 ops were wide enough to check").arg(checked)));
    QVERIFY(communication >= 2);  // NCCL kernels (on both ranks) are drawn as communication
  }
};

QTEST_MAIN(ImportedTraceTest)
#include "imported_trace_test.moc"
