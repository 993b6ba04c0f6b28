#include "syncopate/analyzer/intervals.hpp"

#include <gtest/gtest.h>

namespace syncopate::analyzer {
namespace {

TEST(IntervalSet, UnionMergesOverlappingAndTouchingAndDropsEmpty) {
  auto s = IntervalSet::unionOf({{10, 20}, {0, 5}, {15, 30}, {30, 35}, {40, 40}, {50, 45}});
  ASSERT_EQ(s.intervals().size(), 2u);
  EXPECT_EQ(s.intervals()[0], (Interval{0, 5}));
  EXPECT_EQ(s.intervals()[1], (Interval{10, 35}));
  EXPECT_EQ(s.measure(), 30);
}

TEST(IntervalSet, MeasureInsideWindowsClipsPartialIntervals) {
  auto s = IntervalSet::unionOf({{0, 10}, {20, 30}, {40, 50}});
  EXPECT_EQ(s.measure(0, 50), 30);
  EXPECT_EQ(s.measure(5, 45), 20);   // 5 + 10 + 5
  EXPECT_EQ(s.measure(10, 20), 0);
  EXPECT_EQ(s.measure(25, 26), 1);
  EXPECT_EQ(s.measure(-100, 100), 30);
  EXPECT_EQ(s.measure(60, 70), 0);
  EXPECT_EQ(s.measure(30, 10), 0);
}

TEST(IntervalSet, IntersectSubtractUnite) {
  auto a = IntervalSet::unionOf({{0, 10}, {20, 30}});
  auto b = IntervalSet::unionOf({{5, 25}, {28, 40}});
  auto i = a.intersect(b);
  ASSERT_EQ(i.intervals().size(), 3u);
  EXPECT_EQ(i.intervals()[0], (Interval{5, 10}));
  EXPECT_EQ(i.intervals()[1], (Interval{20, 25}));
  EXPECT_EQ(i.intervals()[2], (Interval{28, 30}));
  auto d = a.subtract(b);
  ASSERT_EQ(d.intervals().size(), 2u);
  EXPECT_EQ(d.intervals()[0], (Interval{0, 5}));
  EXPECT_EQ(d.intervals()[1], (Interval{25, 28}));
  EXPECT_EQ(a.unite(b).measure(), 40);
  EXPECT_EQ(a.measure(), d.measure() + i.measure());
}

TEST(IntervalSet, SubtractWithSeveralHolesInOneInterval) {
  auto a = IntervalSet::unionOf({{0, 100}});
  auto holes = IntervalSet::unionOf({{10, 20}, {30, 40}, {90, 120}});
  auto d = a.subtract(holes);
  ASSERT_EQ(d.intervals().size(), 3u);
  EXPECT_EQ(d.intervals()[2], (Interval{40, 90}));
  EXPECT_EQ(d.measure(), 70);
}

TEST(IntervalSet, Contains) {
  auto s = IntervalSet::unionOf({{0, 10}, {20, 30}});
  EXPECT_TRUE(s.contains(0));
  EXPECT_FALSE(s.contains(10));
  EXPECT_TRUE(s.contains(25));
  EXPECT_FALSE(s.contains(35));
}

TEST(OverlapBreakdown, SplitsWindowByActiveCombination) {
  auto compute = IntervalSet::unionOf({{0, 60}});
  auto comm = IntervalSet::unionOf({{40, 80}});
  auto memory = IntervalSet::unionOf({{50, 55}, {90, 95}});
  const IntervalSet* sets[] = {&compute, &comm, &memory};
  auto r = overlapBreakdown(sets, 0, 100);
  EXPECT_EQ(r[0b000], 15);  // 80-90, 95-100
  EXPECT_EQ(r[0b001], 40);  // compute only 0-40
  EXPECT_EQ(r[0b011], 15);  // compute+comm 40-50, 55-60
  EXPECT_EQ(r[0b111], 5);   // all three 50-55
  EXPECT_EQ(r[0b010], 20);  // comm only 60-80
  EXPECT_EQ(r[0b100], 5);   // memory only 90-95
  std::int64_t total = 0;
  for (auto v : r) total += v;
  EXPECT_EQ(total, 100);
}

}  // namespace
}  // namespace syncopate::analyzer
