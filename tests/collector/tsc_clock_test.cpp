// The host clock read from the time-stamp counter: lines measured from anchors, kept continuous
// as they are replaced, and never used beyond their range (syncopate/collector/tsc_clock.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "syncopate/collector/tsc_clock.hpp"

namespace collector_test {
namespace {

using namespace syncopate::preload;

// A counter at 3 GHz against a clock that starts at 7 s and runs `rate` times its nominal speed
// (NTP's corrections are parts per million).
struct SimulatedClock {
  double rate = 1.0;
  std::int64_t ns(std::uint64_t ticks) const {
    return 7'000'000'000 + static_cast<std::int64_t>(std::llround(static_cast<double>(ticks) * rate / 3.0));
  }
  TscAnchor at(std::uint64_t ticks) const { return {ticks, ns(ticks)}; }
};

constexpr std::uint64_t kTicksPerMs = 3'000'000;

TEST(TscCalibrator, NoLineUntilTheAnchorsSpanTenMilliseconds) {
  SimulatedClock clock;
  TscCalibrator calibrator;
  EXPECT_FALSE(calibrator.next(clock.at(1'000), std::nullopt));
  EXPECT_FALSE(calibrator.next(clock.at(1'000 + 5 * kTicksPerMs), std::nullopt));
  std::optional<TscLine> line = calibrator.next(clock.at(1'000 + 10 * kTicksPerMs), std::nullopt);
  ASSERT_TRUE(line);
  EXPECT_EQ(line->base_ticks, 1'000 + 10 * kTicksPerMs);
  EXPECT_EQ(line->base_ns, clock.ns(1'000 + 10 * kTicksPerMs)) << "the first line passes through its anchor";
  EXPECT_EQ(line->valid_ticks, 100 * kTicksPerMs);
  for (std::uint64_t later : {std::uint64_t{1}, kTicksPerMs, 99 * kTicksPerMs}) {
    const std::uint64_t ticks = line->base_ticks + later;
    EXPECT_NEAR(static_cast<double>(line->at(ticks)), static_cast<double>(clock.ns(ticks)), 1.0) << later;
  }
}

TEST(TscCalibrator, ALineCoversOnlyItsRangeAroundTheAnchor) {
  TscLine line{.base_ticks = 1'000'000, .base_ns = 5'000, .slope_q32 = std::uint64_t{1} << 32, .valid_ticks = 100};
  EXPECT_TRUE(line.covers(1'000'000));
  EXPECT_TRUE(line.covers(1'000'099));
  EXPECT_TRUE(line.covers(999'901));
  EXPECT_FALSE(line.covers(1'000'100));
  EXPECT_FALSE(line.covers(999'899));
  EXPECT_FALSE(line.covers(0));
  EXPECT_EQ(line.at(999'990), 4'990) << "a reading taken just before the anchor is on the line too";
}

// The clock's rate changes by 20 ppm (an NTP correction) after the first line: each new line
// starts where the last one is (no step for a reader), and the error the anchors find is worked
// off, not carried.
TEST(TscCalibrator, LinesFollowTheClockWithoutAStep) {
  SimulatedClock clock;
  TscCalibrator calibrator;
  std::optional<TscLine> current;
  std::uint64_t ticks = 0;
  for (; !current; ticks += 5 * kTicksPerMs) current = calibrator.next(clock.at(ticks), current);
  clock.rate = 1.00002;
  std::int64_t worst_late_error = 0;
  for (int pass = 0; pass < 600; ++pass, ticks += 5 * kTicksPerMs) {
    const std::int64_t before = current->at(ticks);
    std::optional<TscLine> next = calibrator.next(clock.at(ticks), current);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->base_ns, before) << "pass " << pass << ": the new line starts where the old one is";
    EXPECT_GT(next->slope_q32, 0u);
    current = next;
    const std::uint64_t midway = ticks + 2 * kTicksPerMs;
    if (pass >= 100) worst_late_error = std::max<std::int64_t>(worst_late_error, std::llabs(current->at(midway) - clock.ns(midway)));
  }
  // 20 ppm over one 5 ms pass is 100 ns; after half a second the lines are within a few ns.
  EXPECT_LE(worst_late_error, 5) << "ns off the clock after the first 100 passes";
}

TEST(TscCalibrator, AnAnchorFarOffTheLineStartsAFreshLineThere) {
  SimulatedClock clock;
  TscCalibrator calibrator;
  std::optional<TscLine> current;
  std::uint64_t ticks = 0;
  for (; !current; ticks += 5 * kTicksPerMs) current = calibrator.next(clock.at(ticks), current);
  // The clock stepped 2 ms ahead of the counter (more than is worked off gently).
  TscAnchor stepped{ticks, clock.ns(ticks) + 2'000'000};
  std::optional<TscLine> next = calibrator.next(stepped, current);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->base_ns, stepped.ns);
  // An anchor beyond the line's range (the background thread held up for a second).
  ticks += 1'000 * kTicksPerMs;
  next = calibrator.next(clock.at(ticks), current);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->base_ns, clock.ns(ticks));
}

TEST(TscCalibrator, ACounterThatWentBackStartsOver) {
  SimulatedClock clock;
  TscCalibrator calibrator;
  std::optional<TscLine> current;
  std::uint64_t ticks = 50 * kTicksPerMs;
  for (; !current; ticks += 5 * kTicksPerMs) current = calibrator.next(clock.at(ticks), current);
  EXPECT_FALSE(calibrator.next({kTicksPerMs, clock.ns(ticks)}, current)) << "a counter reset: no slope across it";
  EXPECT_FALSE(calibrator.next({6 * kTicksPerMs, clock.ns(ticks) + 5'000'000}, current));
  EXPECT_TRUE(calibrator.next({11 * kTicksPerMs, clock.ns(ticks) + 10'000'000}, current));
}

TEST(TscClock, ReadsThePublishedLineWithinItsRangeOnly) {
  TscClock clock;
  std::int64_t ns = -1;
  EXPECT_FALSE(clock.read(12345, ns)) << "no line yet";
  const TscLine line{.base_ticks = 3'000'000, .base_ns = 1'000'000, .slope_q32 = (std::uint64_t{1} << 32) / 3,
                     .valid_ticks = 300'000};
  clock.publish(line);
  ASSERT_TRUE(clock.read(3'300'000 - 1, ns));
  EXPECT_EQ(ns, line.at(3'300'000 - 1));
  EXPECT_EQ(ns, 1'099'999);
  EXPECT_FALSE(clock.read(3'300'000, ns)) << "beyond the line: the caller reads the system clock";
  clock.publish(TscLine{});
  EXPECT_FALSE(clock.read(3'000'000, ns)) << "withdrawn (the kernel left the TSC)";
}

}  // namespace
}  // namespace collector_test
