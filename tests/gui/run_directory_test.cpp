// Opening run directories written by the trace writer: the loader, the window and the headless
// screenshot on a good run (a structural check of the PNG: lanes present, colours where ops
// are), and on missing or corrupt runs: a clear error, a dialog, never a crash.
#include <QMessageBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "enum_compare.hpp"
#include "syncopate/gui/widgets/gui_app.hpp"
#include "syncopate/gui/widgets/main_window.hpp"
#include "syncopate/gui/widgets/palette.hpp"
#include "syncopate/tuner/plan.hpp"
#include "written_run.hpp"

using namespace syncopate::gui;
using namespace syncopate::gui::testing;
namespace tuner = syncopate::tuner;

namespace {

std::filesystem::path path(const QTemporaryDir& d, const char* sub = "") {
  return std::filesystem::path(d.path().toStdString()) / sub;
}

}  // namespace

class RunDirectoryTest : public QObject {
  Q_OBJECT
 private slots:
  void loadsAWrittenRun() {
    QTemporaryDir tmp;
    const auto dir = path(tmp, "run");
    QCOMPARE(writeTwoRankRun(dir), std::string());
    auto run = loadRunDirectory(dir, 0);
    QVERIFY2(run.ok(), run.ok() ? "" : run.message().c_str());
    const LoadedRun& r = **run;
    QCOMPARE(r.label, std::string("run"));
    QCOMPARE(r.model.ranks.size(), std::size_t{2});
    QCOMPARE(r.model.ops.size(), std::size_t{8});
    QCOMPARE(r.iteration_spans.size(), std::size_t{2});
    // Per rank: host thread, two NVTX lanes (nested "forward"), compute and NCCL streams.
    QCOMPARE(r.lanes.lanes.size(), std::size_t{10});
    QCOMPARE(r.lanes.groups[1].label, std::string("node-a"));
    QCOMPARE(r.lanes.groups[3].label, std::string("node-b"));
    QCOMPARE(r.model.matches.size(), std::size_t{2});  // both all-reduces matched across the ranks

  }

  void missingAndCorruptRunsAreErrors() {
    QTemporaryDir tmp;
    auto missing = loadRunDirectory(path(tmp, "nothing-here"), 0);
    QVERIFY(!missing.ok());
    QVERIFY(missing.message().find("nothing-here") != std::string::npos);
    writeGarbageStore(path(tmp, "garbage"));
    auto garbage = loadRunDirectory(path(tmp, "garbage"), 0);
    QVERIFY(!garbage.ok());
    QVERIFY(garbage.message().find("rank-0.sqlite") != std::string::npos);
    std::filesystem::create_directories(path(tmp, "empty"));
    QVERIFY(!loadRunDirectory(path(tmp, "empty"), 0).ok());
  }

  void windowShowsAnErrorDialogForACorruptRun() {
    QTemporaryDir tmp;
    writeGarbageStore(path(tmp, "garbage"));
    MainWindow w;
    w.show();
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.open({path(tmp, "garbage")});
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    auto* dialog = w.findChild<QMessageBox*>("loadErrorDialog");
    QVERIFY(dialog && dialog->isVisible());
    QVERIFY(dialog->text().contains("rank-0.sqlite"));
  }

  void screenshotOfAWrittenRunHasItsStructure() {
    QTemporaryDir tmp;
    const auto dir = path(tmp, "run");
    QCOMPARE(writeTwoRankRun(dir), std::string());
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QSignalSpy done(&w, &MainWindow::finishedLoading);
    w.open({dir}, 1);
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
    QApplication::processEvents();
    const QImage shot = w.grab().toImage();
    TimelineWidget* tl = w.timeline();
    const TimelineModel& m = w.model();
    const TimelineGeometry g = tl->geometry();
    int coloured = 0;
    for (std::uint32_t l = 0; l < m.laneCount(); ++l) {
      const Lane& lane = m.lane(l);
      const int row = m.rowOfLane(l);
      QVERIFY2(row >= 0, lane.label.c_str());  // every lane is laid out
      const LayoutRow& r = m.rows()[static_cast<std::size_t>(row)];
      const double y = g.rowTop(r) + r.height / 2;
      if (y > g.size.height() || lane.kind != LaneKind::Stream) continue;
      for (std::size_t i = 0; i < lane.size(); ++i) {
        const std::int64_t t = lane.start[i] + (lane.end[i] - lane.start[i]) * 3 / 4;
        if (t < tl->axis().startNs() || t > tl->axis().endNs()) continue;
        const QPoint at = tl->mapTo(&w, QPoint(static_cast<int>(g.canvasLeft() + tl->axis().toPixel(t)), static_cast<int>(y)));
        const QColor c = shot.pixelColor(at);
        // The critical path outlines some ops; everywhere else the op's own colour shows.
        if (c == palette::kindColor(lane.visual[i])) ++coloured;
        else QCOMPARE(c, palette::kCriticalPath);
      }
    }
    QVERIFY(coloured >= 2);  // iteration 1: a gemm and an all-reduce on each rank
    // Rank 0's first all-reduce has no compute under it: its strip is solid red across it, even
    // on realtime-clock timestamps where a double cannot tell neighbouring pixels apart.
    const int strip_row = m.rowOfGroup(static_cast<std::uint32_t>(m.rankGroup(0, 0))) + 1;
    const LayoutRow& strip = m.rows()[static_cast<std::size_t>(strip_row)];
    QCOMPARE_ENUM(strip.kind, LayoutRow::Kind::RankStrip);
    const Lane& nccl0 = m.lane(4);
    QCOMPARE(nccl0.label, std::string("nccl · dev 0"));
    const int y = static_cast<int>(g.rowTop(strip) + strip.height / 4);
    const int x0 = static_cast<int>(g.canvasLeft() + tl->axis().toPixel(nccl0.start[0])) + 2;
    const int x1 = static_cast<int>(g.canvasLeft() + tl->axis().toPixel(nccl0.end[0])) - 2;
    QVERIFY(x1 - x0 > 50);
    for (int x = x0; x < x1; ++x) {
      const QColor c = shot.pixelColor(tl->mapTo(&w, QPoint(x, y)));
      if (c != palette::kCriticalPath) QCOMPARE(c, palette::kExposed);
    }
  }

  void recommendationsAppearAsSoonAsThePlanIsWritten() {
    QTemporaryDir tmp;
    const auto baseline = path(tmp, "baseline"), tuned = path(tmp, "tuned");
    QCOMPARE(writeTwoRankRun(baseline), std::string());
    QCOMPARE(writeTwoRankRun(tuned), std::string());
    MainWindow w;
    w.show();
    QSignalSpy done(&w, &MainWindow::finishedLoading);
    w.open({baseline, tuned});
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
    QVERIFY(!w.recommendations()->hasPlan());
    QVERIFY(w.recommendations()->toPlainText().contains("No recommendation yet"));
    // A first `syncopate tune` found nothing worth a plan: tune.json alone, with its note.
    std::ofstream(baseline / "tune.json") << R"({"run": "baseline", "measured_iteration_ms": 0.1, "replay_iteration_ms": 0.102,
      "replay_error": 0.02, "ideal_iteration_ms": 0.09, "candidates": [{"schedule": "no fusion",
      "predicted_iteration_ms": 0.099, "gain": 0.01, "changes_training_mathematics": false, "recommended": false}],
      "recommended": -1, "note": "the best schedule gains 1.0%, under the 2.0% asked"})";
    QTRY_VERIFY_WITH_TIMEOUT(w.recommendations()->toPlainText().contains("No change recommended"), 5000);
    QVERIFY(!w.recommendations()->hasPlan());
    QVERIFY(w.recommendations()->toPlainText().contains("the best schedule gains 1.0%, under the 2.0% asked"));
    QVERIFY(w.recommendations()->toPlainText().contains("no fusion"));
    QVERIFY(w.recommendations()->toPlainText().contains("0.100 ms / 0.102 ms (replay error 2.0 %)"));
    QVERIFY(w.recommendations()->toPlainText().contains("0.090 ms"));
    // `syncopate tune baseline` writes its plan (docs/tuner.md's format) while the window is open.
    tuner::Plan plan;
    plan.source_run = "baseline";
    plan.knobs.communication_stream = true;
    plan.knobs.bucket_bytes = 1048576;
    plan.why = "Exposed all-reduces.";
    plan.prediction = {0.1, 0.1, 0.0, 0.08, 1.25, 0.07, 0.07, 0.04};
    std::ofstream(baseline / "plan.json.tmp") << tuner::planJson(plan);
    std::filesystem::rename(baseline / "plan.json.tmp", baseline / "plan.json");
    QTRY_VERIFY_WITH_TIMEOUT(w.recommendations()->hasPlan(), 5000);
    const QString text = w.recommendations()->toPlainText();
    QVERIFY(text.contains("Recommended: start at producers, buckets <= 1 MiB"));
    // The tuned run is open beside it: predicted versus measured.
    QVERIFY(text.contains("measured with the plan"));
    QVERIFY(text.contains("prediction error"));
  }

  void aTunedRunAloneChecksThePlanItApplied() {
    QTemporaryDir tmp;
    const auto tuned = path(tmp, "tuned");
    QCOMPARE(writeTwoRankRun(tuned), std::string());
    // What `syncopate run --plan` leaves: the plan it copied and the runtime's reports.
    tuner::Plan plan;
    plan.source_run = "baseline";
    plan.prediction.iteration_ms = 0.08;
    std::ofstream(tuned / "plan.json") << tuner::planJson(plan);
    std::ofstream(tuned / "runtime-rank-0.json") << "{}";
    MainWindow w;
    w.show();
    QSignalSpy done(&w, &MainWindow::finishedLoading);
    w.open({tuned});
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(w.recommendations()->toPlainText().contains("measured with the plan"), 5000);
    QVERIFY(!w.recommendations()->toPlainText().contains("measured here"));
  }

  void headlessScreenshotSucceedsOrSaysWhy() {
    QTemporaryDir tmp;
    const auto dir = path(tmp, "run");
    QCOMPARE(writeTwoRankRun(dir), std::string());
    GuiOptions o;
    o.runs = {dir};
    o.screenshot = path(tmp, "shot.png");
    o.width = 1200;
    o.height = 800;
    auto s = saveScreenshot(o);
    QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
    QImage png(QString::fromStdString(o.screenshot->string()));
    QCOMPARE(png.size(), QSize(1200, 800));

    o.iteration = 9;
    auto no_iteration = saveScreenshot(o);
    QVERIFY(!no_iteration.ok());
    QVERIFY(no_iteration.message().find("no iteration 9 (it has 1 to 2)") != std::string::npos);
    o.iteration.reset();

    o.screenshot = path(tmp, "no-such-folder/shot.png");
    auto unwritable = saveScreenshot(o);
    QVERIFY(!unwritable.ok());
    QVERIFY(unwritable.message().find("cannot write the screenshot") != std::string::npos);

    o.screenshot = path(tmp, "shot2.png");
    o.runs = {path(tmp, "missing")};
    QVERIFY(!saveScreenshot(o).ok());
    writeGarbageStore(path(tmp, "garbage"));
    o.runs = {path(tmp, "garbage")};
    QVERIFY(!saveScreenshot(o).ok());
    QVERIFY(!std::filesystem::exists(path(tmp, "shot2.png")));
  }
};

QTEST_MAIN(RunDirectoryTest)
#include "run_directory_test.moc"
