// The time <-> pixel mapping, zoom and pan limits, ruler ticks and unit formatting.
#include <QtTest>

#include "syncopate/gui/model/time_axis.hpp"
#include "syncopate/gui/model/units.hpp"

using namespace syncopate::gui;

class TimeAxisTest : public QObject {
  Q_OBJECT
 private slots:
  void mapsTimeToPixelsAndBack() {
    TimeAxis a;
    a.setWidth(1000);
    a.setBounds(0, 10'000'000);
    a.setWindow(1'000'000, 2'000'000);
    QCOMPARE(a.nsPerPixel(), 1000.0);
    QCOMPARE(a.toPixel(1'500'000), 500.0);
    QCOMPARE(a.toTime(250), 1'250'000);
  }

  void zoomKeepsTheTimeUnderTheCursor() {
    TimeAxis a;
    a.setWidth(1000);
    a.setBounds(0, 10'000'000);
    a.setWindow(0, 1'000'000);
    const std::int64_t before = a.toTime(300);
    a.zoomAt(300, 4);
    QCOMPARE(a.span(), 250'000.0);
    QVERIFY(std::abs(a.toTime(300) - before) <= 1);
    a.zoomAt(300, 0.5);
    QCOMPARE(a.span(), 500'000.0);
    QVERIFY(std::abs(a.toTime(300) - before) <= 1);
  }

  void zoomStopsAtTheLimits() {
    TimeAxis a;
    a.setWidth(1000);
    a.setBounds(0, 1'000'000);
    a.setWindow(0, 1'000'000);
    for (int i = 0; i < 100; ++i) a.zoomAt(500, 10);
    QCOMPARE(a.span(), static_cast<double>(TimeAxis::kMinSpanNs));
    for (int i = 0; i < 100; ++i) a.zoomAt(500, 0.1);
    QCOMPARE(a.span(), 1'200'000.0);  // 1.2 x the data
  }

  void panKeepsSomeDataInView() {
    TimeAxis a;
    a.setWidth(1000);
    a.setBounds(0, 1'000'000);
    a.setWindow(0, 100'000);
    a.panPixels(500);  // half a window to the right
    QCOMPARE(a.startNs(), 50'000);
    for (int i = 0; i < 1000; ++i) a.panPixels(1000);
    // A tenth of the window stays over the data.
    QCOMPARE(a.startNs(), 1'000'000 - 10'000);
    for (int i = 0; i < 1000; ++i) a.panPixels(-1000);
    QCOMPARE(a.endNs(), 10'000);
  }

  void fitShowsARangeWithAMargin() {
    TimeAxis a;
    a.setWidth(800);
    a.setBounds(0, 10'000'000);
    a.fit(2'000'000, 3'000'000, 0.1);
    QCOMPARE(a.startNs(), 1'900'000);
    QCOMPARE(a.endNs(), 3'100'000);
  }

  void rulerTicksFollowOneTwoFive() {
    TimeAxis a;
    a.setWidth(1000);
    a.setBounds(0, 100'000'000);
    a.setWindow(0, 10'000'000);  // 10 ms over 1000 px: 10 µs per pixel
    const Ruler r = makeRuler(a, 0, 90);
    // 90 px = 900 µs: the smallest 1-2-5 step at least that long is 1 ms.
    QCOMPARE(r.major_step_ns, 1'000'000);
    int majors = 0;
    for (const RulerTick& t : r.ticks) {
      if (t.major) {
        QCOMPARE(t.time % 1'000'000, 0);
        ++majors;
      } else {
        QCOMPARE(t.time % 200'000, 0);  // 5 minor steps per major
      }
    }
    QCOMPARE(majors, 11);  // 0, 1, ..., 10 ms
    a.setWindow(0, 2'000'000);  // 2 µs per pixel: 180 µs -> 200 µs majors, 4 minors each
    const Ruler r2 = makeRuler(a, 0, 90);
    QCOMPARE(r2.major_step_ns, 200'000);
    QCOMPARE(r2.ticks[1].time, 50'000);
  }

  void rulerTicksAreRelativeToTheOrigin() {
    TimeAxis a;
    a.setWidth(1000);
    a.setBounds(1'000'000'123, 1'010'000'123);
    a.setWindow(1'000'000'123, 1'010'000'123);
    const Ruler r = makeRuler(a, 1'000'000'123, 90);
    QVERIFY(!r.ticks.empty());
    QCOMPARE(r.ticks.front().time, 1'000'000'123);
    QVERIFY(r.ticks.front().major);
  }

  void keepsNanosecondsOnRealtimeClocks() {
    // Aligned times are CLOCK_REALTIME ns (~1.8e18), where a double only resolves 256 ns: zoomed
    // to 1 ns per pixel, every pixel must still map to its own nanosecond and back.
    const std::int64_t t0 = 1'795'964'189'821'650'037;
    TimeAxis a;
    a.setWidth(1000);
    a.setBounds(t0, t0 + 1'000'000'000);
    a.setWindow(t0 + 500'000'000, t0 + 500'001'000);
    QCOMPARE(a.nsPerPixel(), 1.0);
    for (int x = 0; x < 1000; ++x) {
      QCOMPARE(a.toTime(x), t0 + 500'000'000 + x);
      QCOMPARE(a.toPixel(t0 + 500'000'000 + x), static_cast<double>(x));
    }
    a.panPixels(10);
    QCOMPARE(a.startNs(), t0 + 500'000'010);
  }

  void formatsDurationsWithSensibleUnits() {
    QCOMPARE(formatDuration(850), std::string("850 ns"));
    QCOMPARE(formatDuration(12'400), std::string("12.4 µs"));
    QCOMPARE(formatDuration(3'214'000), std::string("3.21 ms"));
    QCOMPARE(formatDuration(1'500'000'000), std::string("1.50 s"));
    QCOMPARE(formatDuration(-2'000), std::string("-2.00 µs"));
    QCOMPARE(formatTimeLabel(12'500'000, 2'500'000), std::string("12.5 ms"));
    QCOMPARE(formatTimeLabel(3'000'000, 1'000'000), std::string("3 ms"));
    QCOMPARE(formatTimeLabel(200, 50), std::string("200 ns"));
    QCOMPARE(formatBytes(512), std::string("512 B"));
    QCOMPARE(formatBytes(4096), std::string("4.00 KiB"));
    QCOMPARE(formatBytes(3 << 20), std::string("3.00 MiB"));
  }
};

QTEST_GUILESS_MAIN(TimeAxisTest)
#include "time_axis_test.moc"
