// The application window on in-memory runs: it shows the runs, fills the metrics once the
// analysis arrives, draws the critical path of the shown iteration, computes range statistics
// off the UI thread, and shows an error dialog (never a crash) when a run cannot be loaded.
#include <QMessageBox>
#include <QSignalSpy>
#include <QtTest>

#include "sample_runs.hpp"
#include "syncopate/gui/widgets/main_window.hpp"

using namespace syncopate::gui;
using namespace syncopate::gui::testing;

class MainWindowTest : public QObject {
  Q_OBJECT
 private slots:
  void showsARunWithItsMetricsAndCriticalPath() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QSignalSpy done(&w, &MainWindow::finishedLoading);
    w.openSources({memorySource("sample")});
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
    QVERIFY(w.finished());
    QVERIFY(w.lastError().isEmpty());
    QCOMPARE(w.model().runCount(), std::size_t{1});
    QCOMPARE(w.metrics()->table().rowCount(), 4);
    // The first iteration is shown, with its critical path over the timeline.
    QVERIFY(w.timeline()->axis().startNs() <= us(5));
    QVERIFY(w.timeline()->axis().endNs() >= us(105));
    QVERIFY(w.timeline()->axis().span() < static_cast<double>(us(150)));
    QVERIFY(!w.timeline()->overlays().critical_path.empty());
    QVERIFY(w.showIteration(2));
    QVERIFY(w.timeline()->axis().endNs() >= us(190));
    QVERIFY(!w.showIteration(9));
    // A selected range gets its statistics from the worker.
    QSignalSpy stats(w.rangeStats(), &QTextEdit::textChanged);
    w.timeline()->selectRange(0, us(100));
    QTRY_VERIFY_WITH_TIMEOUT(w.rangeStats()->toPlainText().contains("Top kernels"), 5000);
    QVERIFY(w.rangeStats()->toPlainText().contains("gemm"));
    // Selecting an op fills the details, with its collective's straggler.
    const auto& m = w.model().run(0).model;
    syncopate::analyzer::Index op = 0;
    for (syncopate::analyzer::Index o = 0; o < m.ops.size(); ++o)
      if (m.str(m.ops.name[o]) == "AllReduce") op = o;
    w.timeline()->selectItem({0, ItemTable::Op, op});
    QVERIFY(w.details()->toPlainText().contains("rank 1 was last"));
    // No plan in an in-memory run: the panel says how to get one.
    QVERIFY(!w.recommendations()->hasPlan());
  }

  void comparesTwoRuns() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QSignalSpy done(&w, &MainWindow::finishedLoading);
    w.openSources({memorySource("A"), memorySource("B", 3'000'000)}, 2);
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
    QCOMPARE(w.model().runCount(), std::size_t{2});
    QCOMPARE(w.model().displayOffset(1), -3'000'000);  // aligned on iteration 2
    QCOMPARE(w.metrics()->table().rowCount(), 8);
    QVERIFY(w.metrics()->isTabVisible(1));
  }

  void aRunThatCannotBeLoadedShowsAnErrorDialog() {
    MainWindow w;
    w.show();
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    RunSource bad;
    bad.label = "broken";
    bad.load = [](const ProgressFn&) -> syncopate::trace::Result<syncopate::analyzer::RunModel> {
      return syncopate::trace::failure("broken/rank-0.sqlite is not a Syncopate store.");
    };
    w.openSources({bad});
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    auto* dialog = w.findChild<QMessageBox*>("loadErrorDialog");
    QVERIFY(dialog != nullptr);
    QVERIFY(dialog->isVisible());
    QCOMPARE(dialog->text(), QString("broken/rank-0.sqlite is not a Syncopate store."));
    QCOMPARE(w.lastError(), dialog->text());
    dialog->accept();
    // The window stays usable: a good run opens afterwards.
    QSignalSpy done(&w, &MainWindow::finishedLoading);
    w.openSources({memorySource("good")});
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
    QVERIFY(w.lastError().isEmpty());
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
