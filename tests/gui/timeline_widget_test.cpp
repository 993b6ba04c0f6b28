// The timeline view, rendered offscreen and driven with synthetic input: lanes and colours where
// ops are (a structural screenshot check), the exposed-communication / idle strip, merged blocks
// when zoomed out, W/S/A/D, Ctrl+wheel at the cursor, drag to pan, Shift+drag to select a range,
// clicking an op or a group header.
#include <QSignalSpy>
#include <QtTest>

#include "enum_compare.hpp"

#include "sample_runs.hpp"
#include "syncopate/gui/widgets/palette.hpp"
#include "syncopate/gui/widgets/timeline_widget.hpp"

using namespace syncopate::gui;
using namespace syncopate::gui::testing;
using syncopate::analyzer::Index;

namespace {

struct Fixture {
  TimelineModel model;
  TimelineWidget widget{&model};
  explicit Fixture(syncopate::analyzer::RunModel run, QSize size = {1200, 520}) {
    model.setRuns({prepared(std::move(run))});
    widget.resize(size);
    widget.show();
    QVERIFY(QTest::qWaitForWindowExposed(&widget));
    widget.modelReset();
  }
  QImage image() {
    QImage img(widget.size(), QImage::Format_ARGB32);
    img.fill(Qt::black);
    QPainter p(&img);
    widget.paintTo(p);
    return img;
  }
  // Widget y of the middle of lane `lane`'s row (its items are drawn there).
  int laneY(std::uint32_t lane) const {
    const LayoutRow& r = model.rows()[static_cast<std::size_t>(model.rowOfLane(lane))];
    return static_cast<int>(widget.geometry().rowTop(r) + r.height / 2);
  }
  int stripY(std::uint32_t group, bool bottom) const {
    for (const LayoutRow& r : model.rows())
      if (r.kind == LayoutRow::Kind::RankStrip && r.index == group)
        return static_cast<int>(widget.geometry().rowTop(r) + (bottom ? r.height * 0.75 : r.height * 0.25));
    return -1;
  }
  int x(double t) const {
    return static_cast<int>(widget.geometry().canvasLeft() + widget.axis().toPixel(static_cast<std::int64_t>(t)));
  }
};

bool isBackground(QRgb c) {
  return QColor(c) == palette::kBackground || QColor(c) == palette::kLaneStripe;
}

}  // namespace

class TimelineWidgetTest : public QObject {
  Q_OBJECT
 private slots:
  void screenshotHasLanesAndColoursWhereOpsAre() {
    Fixture f(twoRankRun());
    f.widget.fitRange(0, us(200));
    const QImage img = f.image();
    const TimelineGeometry g = f.widget.geometry();
    int checked = 0;
    for (std::uint32_t l = 0; l < f.model.laneCount(); ++l) {
      const Lane& lane = f.model.lane(l);
      const int y = f.laneY(l);
      // The lane's label is written in its row of the label column.
      bool text = false;
      for (int x = 4; x < g.label_width - 4 && !text; ++x)
        for (int dy = -5; dy <= 5 && !text; ++dy) text = QColor(img.pixel(x, y + dy)).lightness() < 100;
      QVERIFY2(text, lane.label.c_str());
      if (lane.kind != LaneKind::Stream) continue;
      // Every op is drawn in its kind's colour (sampled at 3/4 of its width, clear of its label)...
      for (std::size_t i = 0; i < lane.size(); ++i) {
        const double t = static_cast<double>(lane.start[i]) + 0.75 * static_cast<double>(lane.end[i] - lane.start[i]);
        QCOMPARE(QColor(img.pixel(f.x(t), y)), palette::kindColor(lane.visual[i]));
        ++checked;
      }
      // ... and the time between ops is empty.
      for (std::size_t i = 0; i + 1 < lane.size(); ++i) {
        if (lane.start[i + 1] - lane.end[i] < us(4)) continue;
        const double gap = static_cast<double>(lane.end[i] + lane.start[i + 1]) / 2;
        QVERIFY(isBackground(img.pixel(f.x(gap), y)));
      }
    }
    QCOMPARE(checked, static_cast<int>(f.model.run(0).model.ops.size()));
    // Compute and communication are told apart.
    QVERIFY(palette::kindColor(VisualKind::Compute) != palette::kindColor(VisualKind::Communication));
  }

  void rankStripShowsExposedCommunicationAndIdle() {
    Fixture f(twoRankRun());
    f.widget.fitRange(0, us(200));
    const QImage img = f.image();
    const std::uint32_t rank0 = static_cast<std::uint32_t>(f.model.rankGroup(0, 0));
    // 70 µs: rank 0's all-reduce runs with no compute under it: exposed, not idle.
    QCOMPARE(QColor(img.pixel(f.x(us(70)), f.stripY(rank0, false))), palette::kExposed);
    QCOMPARE(QColor(img.pixel(f.x(us(70)), f.stripY(rank0, true))), palette::kBackground);
    // 25 µs: gemm only: neither.
    QCOMPARE(QColor(img.pixel(f.x(us(25)), f.stripY(rank0, false))), palette::kBackground);
    // 47 µs: nothing runs on rank 0: idle.
    QCOMPARE(QColor(img.pixel(f.x(us(47)), f.stripY(rank0, true))), palette::kIdle);
    // Solid across the exposed stretch, pixel by pixel (painted directly, and through grab()).
    const QImage grabbed = f.widget.grab().toImage();
    for (int x = f.x(us(51)); x < f.x(us(89)); ++x) {
      QCOMPARE(QColor(img.pixel(x, f.stripY(rank0, false))), palette::kExposed);
      QCOMPARE(QColor(grabbed.pixel(x, f.stripY(rank0, false))), palette::kExposed);
    }
    // 165 µs: the all-reduce is hidden under overlap_a/b: not exposed.
    QCOMPARE(QColor(img.pixel(f.x(us(165)), f.stripY(rank0, false))), palette::kBackground);
  }

  void zoomedOutManyOpsBecomeOneBlockThatSaysHowMany() {
    // 100,000 ops of 100 ns every 150 ns: 15 ms on about 970 px.
    Fixture f(denseRun(100'000, 100, 150));
    f.widget.fitAll();
    const QImage img = f.image();
    const std::uint32_t lane = 1;  // after the thread's NVTX lane
    QCOMPARE_ENUM(f.model.lane(lane).kind, LaneKind::Stream);
    const LodLevel* level = f.model.lodFor(lane, f.widget.axis().nsPerPixel());
    QVERIFY(level);
    QCOMPARE(level->blocks.size(), std::size_t{1});
    const LodBlock& b = level->blocks[0];
    QCOMPARE(b.count, 100'000u);
    const double occupancy = static_cast<double>(b.busy_ns) / static_cast<double>(b.end - b.start);
    QCOMPARE(QColor(img.pixel(f.x(7'000'000), f.laneY(lane) + 6)), palette::mergedColor(VisualKind::Compute, occupancy));
    // Clicking it selects the block, not an op.
    QSignalSpy blocks(&f.widget, &TimelineWidget::blockSelected);
    QTest::mouseClick(&f.widget, Qt::LeftButton, {}, QPoint(f.x(7'000'000), f.laneY(lane)));
    QCOMPARE(blocks.count(), 1);
    QCOMPARE(blocks.at(0).at(0).value<Hit>().count, 100'000u);
    // Zoomed in far enough, the ops themselves are drawn again.
    f.widget.fitRange(1'000'000, 1'003'000);
    QVERIFY(f.model.lodFor(lane, f.widget.axis().nsPerPixel()) == nullptr);
    const QImage in = f.image();
    // Op 6667 runs [1,000,050, 1,000,150); the next starts at 1,000,200.
    QCOMPARE(QColor(in.pixel(f.x(1'000'100), f.laneY(lane))), palette::kindColor(VisualKind::Compute));
    QVERIFY(isBackground(in.pixel(f.x(1'000'175), f.laneY(lane))));
  }

  void keysZoomAndPan() {
    Fixture f(twoRankRun());
    f.widget.fitRange(0, us(100));
    QCursor::setPos(f.widget.mapToGlobal(QPoint(-50, -50)));  // not over the timeline: keys act at the centre
    const TimeAxis& a = f.widget.axis();
    const double span = a.span();
    const std::int64_t centre = a.toTime(a.width() / 2);
    QTest::keyClick(&f.widget, Qt::Key_W);
    QVERIFY(std::abs(a.span() - span / 1.25) < 1e-6);
    QVERIFY(std::abs(a.toTime(a.width() / 2) - centre) <= 1);
    QTest::keyClick(&f.widget, Qt::Key_S);
    QVERIFY(std::abs(a.span() - span) < 1e-6);
    const std::int64_t start = a.startNs();
    QTest::keyClick(&f.widget, Qt::Key_D);
    QVERIFY(std::abs(a.startNs() - (start + static_cast<std::int64_t>(span / 10))) <= 1);
    QTest::keyClick(&f.widget, Qt::Key_A);
    QVERIFY(std::abs(a.startNs() - start) <= 1);
    QTest::keyClick(&f.widget, Qt::Key_Home);
    QVERIFY(f.widget.axis().span() > us(200));
  }

  void ctrlWheelZoomsAtTheCursor() {
    Fixture f(twoRankRun());
    f.widget.fitRange(0, us(200));
    const QPointF pos(f.x(us(60)), f.laneY(3));
    const std::int64_t before = f.widget.axis().toTime(pos.x() - f.widget.geometry().canvasLeft());
    const double span = f.widget.axis().span();
    QWheelEvent wheel(pos, f.widget.mapToGlobal(pos), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::ControlModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(&f.widget, &wheel);
    QVERIFY(std::abs(f.widget.axis().span() - span / 1.2) < 1e-6);
    const std::int64_t after = f.widget.axis().toTime(pos.x() - f.widget.geometry().canvasLeft());
    QVERIFY(std::abs(after - before) <= 1);
  }

  void dragPansAndShiftDragSelectsARange() {
    Fixture f(twoRankRun());
    f.widget.fitRange(0, us(200));
    const std::int64_t start = f.widget.axis().startNs();
    const double npp = f.widget.axis().nsPerPixel();
    const int y = f.laneY(3);
    QTest::mousePress(&f.widget, Qt::LeftButton, {}, QPoint(600, y));
    QTest::mouseMove(&f.widget, QPoint(550, y));
    QTest::mouseMove(&f.widget, QPoint(500, y));
    QTest::mouseRelease(&f.widget, Qt::LeftButton, {}, QPoint(500, y));
    QVERIFY(std::abs(f.widget.axis().startNs() - (start + static_cast<std::int64_t>(100 * npp))) <= 1);

    QSignalSpy ranges(&f.widget, &TimelineWidget::rangeSelected);
    const std::int64_t t0 = f.widget.axis().toTime(400 - f.widget.geometry().canvasLeft());
    const std::int64_t t1 = f.widget.axis().toTime(700 - f.widget.geometry().canvasLeft());
    QTest::mousePress(&f.widget, Qt::LeftButton, Qt::ShiftModifier, QPoint(700, y));
    QTest::mouseMove(&f.widget, QPoint(600, y));
    QTest::mouseMove(&f.widget, QPoint(400, y));
    QTest::mouseRelease(&f.widget, Qt::LeftButton, Qt::ShiftModifier, QPoint(400, y));
    QCOMPARE(ranges.count(), 1);
    QVERIFY(std::abs(ranges.at(0).at(0).toLongLong() - t0) <= 1);
    QVERIFY(std::abs(ranges.at(0).at(1).toLongLong() - t1) <= 1);
    QVERIFY(f.widget.overlays().range.has_value());
  }

  void clickSelectsAnOpAndShowsItsLinks() {
    Fixture f(twoRankRun());
    f.widget.fitRange(0, us(200));
    QSignalSpy items(&f.widget, &TimelineWidget::itemSelected);
    const std::uint32_t nccl0 = 5;  // rank 0's NCCL stream
    QCOMPARE(f.model.lane(nccl0).label, std::string("nccl · dev 0"));
    QTest::mouseClick(&f.widget, Qt::LeftButton, {}, QPoint(f.x(us(70)), f.laneY(nccl0)));
    QCOMPARE(items.count(), 1);
    const ItemRef item = items.at(0).at(0).value<ItemRef>();
    QCOMPARE_ENUM(item.table, ItemTable::Op);
    const auto& m = f.model.run(0).model;
    QCOMPARE(m.str(m.ops.name[item.index]), std::string_view("AllReduce"));
    // The collective joins both ranks; the launch flow comes from the ncclAllReduce call.
    QVERIFY(f.widget.overlays().collective.has_value());
    QCOMPARE(f.widget.overlays().collective->ends.size(), std::size_t{2});
    QCOMPARE(f.widget.overlays().flows.size(), std::size_t{1});
    QCOMPARE_ENUM(f.model.lane(f.widget.overlays().flows[0].first.lane).kind, LaneKind::Thread);
    // Clicking empty time clears the selection.
    QSignalSpy cleared(&f.widget, &TimelineWidget::selectionCleared);
    QTest::mouseClick(&f.widget, Qt::LeftButton, {}, QPoint(f.x(us(97)), f.laneY(nccl0)));
    QCOMPARE(cleared.count(), 1);
    QVERIFY(!f.widget.overlays().collective.has_value());
  }

  void clickingAGroupHeaderCollapsesIt() {
    Fixture f(twoRankRun());
    const std::size_t rows = f.model.rows().size();
    const LayoutRow& rank0 = f.model.rows()[1];
    QCOMPARE_ENUM(rank0.kind, LayoutRow::Kind::Group);
    const QPoint header(20, static_cast<int>(f.widget.geometry().rowTop(rank0) + rank0.height / 2));
    QTest::mouseClick(&f.widget, Qt::LeftButton, {}, header);
    QVERIFY(f.model.collapsed(2));
    QCOMPARE(f.model.rows().size(), rows - 6);
    QTest::mouseClick(&f.widget, Qt::LeftButton, {}, header);
    QCOMPARE(f.model.rows().size(), rows);
  }
};

QTEST_MAIN(TimelineWidgetTest)
#include "timeline_widget_test.moc"
