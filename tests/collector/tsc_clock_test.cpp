// The host clock read from the time-stamp counter: lines measured from anchors, kept continuous
// as they are replaced, and never used beyond their range (syncopate/collector/tsc_clock.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <atomic>
#include <optional>
#include <thread>

#include "syncopate/collector/tsc_clock.hpp"

namespace collector_test {
namespace {

using namespace syncopate::preload;

// A counter at 3 GHz against a clock that starts at 7 s and, from `change_tick` on, runs `rate`
// times its nominal speed (an NTP correction is parts per million).
struct SimulatedClock {
  std::uint64_t change_tick = ~std::uint64_t{0};
  double rate = 1.0;
  std::int64_t ns(std::uint64_t ticks) const {
    const double nominal = static_cast<double>(std::min(ticks, change_tick)) / 3.0;
    const double changed = ticks > change_tick ? static_cast<double>(ticks - change_tick) * rate / 3.0 : 0.0;
    return 7'000'000'000 + static_cast<std::int64_t>(std::llround(nominal + changed));
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

// The clock's rate changes by 20 ppm (an NTP correction) a second in: each new line starts where
// the last one is (no step for a reader); the slope, measured over the last 100-200 ms, takes the
// new rate within 300 ms, and the error the anchors find meanwhile is worked off, not carried.
TEST(TscCalibrator, LinesFollowTheClockWithoutAStep) {
  SimulatedClock clock;
  clock.change_tick = 1'000 * kTicksPerMs;
  clock.rate = 1.00002;
  TscCalibrator calibrator;
  std::optional<TscLine> current;
  std::uint64_t ticks = 0;
  for (; !current; ticks += 5 * kTicksPerMs) current = calibrator.next(clock.at(ticks), current);
  std::int64_t worst_before_change = 0, worst_while_following = 0, worst_after = 0;
  for (; ticks < 3'000 * kTicksPerMs; ticks += 5 * kTicksPerMs) {
    const std::int64_t before = current->at(ticks);
    std::optional<TscLine> next = calibrator.next(clock.at(ticks), current);
    ASSERT_TRUE(next);
    ASSERT_NE(next->valid_ticks, 0u) << "at tick " << ticks;
    EXPECT_EQ(next->base_ns, before) << "at tick " << ticks << ": the new line starts where the old one is";
    current = next;
    const std::uint64_t midway = ticks + 2 * kTicksPerMs;
    const std::int64_t error = std::llabs(current->at(midway) - clock.ns(midway));
    std::int64_t& worst = midway < clock.change_tick                   ? worst_before_change
                          : midway < clock.change_tick + 1'000 * kTicksPerMs ? worst_while_following
                                                                         : worst_after;
    worst = std::max(worst, error);
  }
  EXPECT_LE(worst_before_change, 5);
  // 20 ppm of a 20 ms slew, while the slope catches up.
  EXPECT_LE(worst_while_following, 400) << "ns off the clock in the second after the change";
  EXPECT_LE(worst_after, 5) << "ns off the clock from a second after the change";
}

TEST(TscCalibrator, AnAnchorFarOffTheLineWithdrawsItUntilANewBaseline) {
  SimulatedClock clock;
  TscCalibrator calibrator;
  std::optional<TscLine> current;
  std::uint64_t ticks = 0;
  for (; !current; ticks += 5 * kTicksPerMs) current = calibrator.next(clock.at(ticks), current);
  // The clock stepped 2 ms ahead of the counter (more than is worked off gently): no line, so
  // readers take the clock itself, and a slope measured afresh from there.
  const std::int64_t step_ns = 2'000'000;
  std::optional<TscLine> next = calibrator.next({ticks, clock.ns(ticks) + step_ns}, current);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->valid_ticks, 0u);
  const std::uint64_t stepped_at = ticks;
  ticks += 5 * kTicksPerMs;
  EXPECT_FALSE(calibrator.next({ticks, clock.ns(ticks) + step_ns}, std::nullopt));
  ticks += 5 * kTicksPerMs;
  next = calibrator.next({ticks, clock.ns(ticks) + step_ns}, std::nullopt);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->base_ns, clock.ns(ticks) + step_ns);
  EXPECT_EQ(next->at(stepped_at), clock.ns(stepped_at) + step_ns) << "the slope is the counter's, not the step's";
  // An anchor beyond the line's range (the background thread held up for a second): readers
  // have been on the clock itself, and the new line starts at the anchor.
  current = next;
  ticks += 1'000 * kTicksPerMs;
  next = calibrator.next({ticks, clock.ns(ticks) + step_ns}, current);
  ASSERT_TRUE(next);
  EXPECT_NE(next->valid_ticks, 0u);
  EXPECT_EQ(next->base_ns, clock.ns(ticks) + step_ns);
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

// A reader on another thread never takes half of one line and half of another: every reading it
// accepts is one of the two lines the writer alternates, at that counter value.
TEST(TscClock, AReaderNeverMixesTwoLines) {
  const TscLine slow{.base_ticks = 1'000, .base_ns = 5'000, .slope_q32 = std::uint64_t{1} << 32, .valid_ticks = 1'000'000};
  const TscLine fast{.base_ticks = 2'000, .base_ns = 9'000, .slope_q32 = std::uint64_t{3} << 32, .valid_ticks = 2'000'000};
  TscClock clock;
  clock.publish(slow);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 200'000; ++i) clock.publish(i % 2 == 0 ? fast : slow);
    done.store(true);
  });
  std::uint64_t accepted = 0, mixed = 0;
  for (std::uint64_t ticks = 3'000; !done.load(); ticks = ticks % 900'000 + 3'001) {
    std::int64_t ns = 0;
    if (!clock.read(ticks, ns)) continue;
    ++accepted;
    if (ns != slow.at(ticks) && ns != fast.at(ticks)) ++mixed;
  }
  writer.join();
  EXPECT_EQ(mixed, 0u) << "of " << accepted << " readings accepted";
}

}  // namespace
}  // namespace collector_test
