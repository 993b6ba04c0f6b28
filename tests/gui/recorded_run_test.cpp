// The sample trainer recorded on simgpu (4 ranks under mpirun, `syncopate record`, naive mode,
// the communication-heavy profile) and opened in the window: a group per rank with thread, NVTX
// and stream lanes, every recorded op on a lane, and every op wide enough to see drawn in its
// kind's colour, all-reduces as communication on every rank.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "drawn_ops.hpp"
#include "enum_compare.hpp"
#include "syncopate/gui/widgets/main_window.hpp"

using namespace syncopate::gui;

namespace {

constexpr int kRanks = 4;

std::string quoted(const std::string& text) { return "'" + text + "'"; }

}  // namespace

class RecordedRunTest : public QObject {
  Q_OBJECT
 private slots:
  void recordedTrainerShowsEveryRankWithColoursWhereOpsAre() {
    QTemporaryDir tmp;
    const std::filesystem::path dir = std::filesystem::path(tmp.path().toStdString()) / "naive";
    const std::filesystem::path log = std::filesystem::path(tmp.path().toStdString()) / "record.log";
    const std::string command =
        "LD_LIBRARY_PATH=" + quoted(GUI_TEST_SIMGPU_LIB_DIR) + " OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
        "SIMGPU_PROFILE=" + quoted(GUI_TEST_SOURCE_DIR "/samples/dp_trainer/profiles/comm-heavy.json") + " " +
        quoted(GUI_TEST_SYNCOPATE) + " record -o " + quoted(dir.string()) + " -- " + quoted(GUI_TEST_MPIEXEC) + " -np " +
        std::to_string(kRanks) + " " + GUI_TEST_MPIRUN_FLAGS + " -x LD_LIBRARY_PATH -x SIMGPU_PROFILE " +
        quoted(GUI_TEST_DP_TRAINER) + " --mode naive --iterations 4 --warmup 1 > " + quoted(log.string()) + " 2>&1";
    if (std::system(command.c_str()) != 0) {
      std::stringstream text;
      text << std::ifstream(log).rdbuf();
      QFAIL(qPrintable(QString::fromStdString("syncopate record failed:\n" + text.str())));
    }

    MainWindow w;
    w.resize(1600, 1200);
    w.show();
    QSignalSpy done(&w, &MainWindow::finishedLoading);
    w.open({dir});
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 60000);
    const TimelineModel& m = w.model();
    QCOMPARE(m.run(0).model.ranks.size(), std::size_t{kRanks});
    std::size_t ops_on_lanes = 0;
    for (syncopate::analyzer::Index r = 0; r < kRanks; ++r) {
      QVERIFY(m.rankGroup(0, r) >= 0);
      bool thread = false, nvtx = false, stream = false;
      for (std::uint32_t l : m.group(static_cast<std::uint32_t>(m.rankGroup(0, r))).lanes) {
        thread |= m.lane(l).kind == LaneKind::Thread;
        nvtx |= m.lane(l).kind == LaneKind::Ranges;
        stream |= m.lane(l).kind == LaneKind::Stream;
        if (m.lane(l).kind == LaneKind::Stream) ops_on_lanes += m.lane(l).size();
      }
      QVERIFY(thread);
      QVERIFY(nvtx);  // the trainer's ProfilerStep#N and phase ranges
      QVERIFY(stream);
    }
    QCOMPARE(ops_on_lanes, m.run(0).model.ops.size());
    QVERIFY(m.run(0).iteration_spans.size() >= 3);

    const syncopate::gui::testing::DrawnOps drawn = syncopate::gui::testing::checkDrawnOps(w);
    QVERIFY2(drawn.failure.empty(), drawn.failure.c_str());
    qInfo("%d ops checked for colour, %d of them communication", drawn.checked, drawn.communication);
    QVERIFY2(drawn.checked >= 40, qPrintable(QString("only %1 ops were wide enough to check").arg(drawn.checked)));
    QVERIFY(drawn.communication >= kRanks);  // every rank's all-reduces, drawn as communication
  }
};

QTEST_MAIN(RecordedRunTest)
#include "recorded_run_test.moc"
