// Loading and range statistics off the UI thread: results arrive as signals, and a newer
// request makes an older one stale so that its result is dropped (generation counters).
#include <QSemaphore>
#include <QSignalSpy>
#include <QtTest>

#include "sample_runs.hpp"
#include "syncopate/gui/model/workers.hpp"

using namespace syncopate::gui;
using namespace syncopate::gui::testing;

class WorkersTest : public QObject {
  Q_OBJECT
 private slots:
  void loadsThenAnalysesOffTheUiThread() {
    RunLoader loader;
    QSignalSpy loaded(&loader, &RunLoader::loaded);
    QSignalSpy analysed(&loader, &RunLoader::analysed);
    QSignalSpy progress(&loader, &RunLoader::progress);
    const std::uint64_t gen = loader.load({memorySource("A"), memorySource("B", 1000)});
    QTRY_COMPARE_WITH_TIMEOUT(analysed.count(), 2, 10000);
    QCOMPARE(loaded.count(), 1);
    QCOMPARE(loaded.at(0).at(0).toULongLong(), gen);
    QCOMPARE(loader.runs().size(), std::size_t{2});
    QCOMPARE(loader.runs()[1]->label, std::string("B"));
    QVERIFY(!loader.runs()[0]->lanes.lanes.empty());
    QVERIFY(loader.analysis(0) != nullptr);
    QVERIFY(loader.analysis(1) != nullptr);
    QVERIFY(loader.analysisError(0).isEmpty());
    QCOMPARE(loader.analysis(0)->rank_iterations.size(), std::size_t{4});
    QVERIFY(progress.count() >= 1);
  }

  void aNewerLoadMakesTheOlderOneStale() {
    RunLoader loader;
    QSignalSpy loaded(&loader, &RunLoader::loaded);
    QSignalSpy failed(&loader, &RunLoader::failed);
    QSemaphore release;
    RunSource slow = memorySource("slow");
    slow.load = [&release](const ProgressFn&) -> syncopate::trace::Result<syncopate::analyzer::RunModel> {
      release.acquire();  // held until the second load has started
      return twoRankRun();
    };
    const std::uint64_t first = loader.load({slow});
    const std::uint64_t second = loader.load({memorySource("fast")});
    QVERIFY(second > first);
    release.release();
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 10000);
    loader.wait();
    QCoreApplication::processEvents();
    QCOMPARE(loaded.count(), 1);
    QCOMPARE(loaded.at(0).at(0).toULongLong(), second);
    QCOMPARE(loader.runs()[0]->label, std::string("fast"));
    QCOMPARE(failed.count(), 0);
  }

  void aFailedLoadSaysWhy() {
    RunLoader loader;
    QSignalSpy failed(&loader, &RunLoader::failed);
    QSignalSpy loaded(&loader, &RunLoader::loaded);
    RunSource bad;
    bad.label = "bad";
    bad.load = [](const ProgressFn&) -> syncopate::trace::Result<syncopate::analyzer::RunModel> {
      return syncopate::trace::failure("rank-0.sqlite is not a Syncopate store.");
    };
    loader.load({memorySource("good"), bad});
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    QCOMPARE(failed.at(0).at(1).toString(), QString("rank-0.sqlite is not a Syncopate store."));
    loader.wait();
    QCoreApplication::processEvents();
    QCOMPARE(loaded.count(), 0);
  }

  void onlyTheLatestRangeIsDelivered() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    RangeStatsWorker worker;
    QSignalSpy ready(&worker, &RangeStatsWorker::ready);
    worker.request(m.runsOnView(), 0, us(100));
    const std::uint64_t latest = worker.request(m.runsOnView(), 0, us(50));
    worker.wait();
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 5000);
    QCoreApplication::processEvents();
    QCOMPARE(ready.count(), 1);
    QCOMPARE(ready.at(0).at(0).toULongLong(), latest);
    QCOMPARE(worker.result().end, us(50));
    // Cancelling drops a result still on its way.
    worker.request(m.runsOnView(), 0, us(10));
    worker.cancel();
    worker.wait();
    QCoreApplication::processEvents();
    QCOMPARE(ready.count(), 1);
  }
};

QTEST_GUILESS_MAIN(WorkersTest)
#include "workers_test.moc"
