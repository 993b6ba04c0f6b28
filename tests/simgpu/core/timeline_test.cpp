// The interference timeline (simgpu/core/src/timeline.hpp): ends are exact functions of the
// ops' model starts and work, whatever order the ops are given in.
#include "simgpu/core/timeline.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace simgpu::detail {
namespace {

constexpr TimeNs kMs = 1'000'000;
constexpr Slowdowns kSlowdowns{0.10, 0.15};

TimelineOp compute(TimeNs start, TimeNs work) { return TimelineOp{WorkClass::Compute, start, work}; }
TimelineOp communication(TimeNs start, TimeNs work) { return TimelineOp{WorkClass::Communication, start, work}; }
TimelineOp completedOp(WorkClass c, TimeNs start, TimeNs end) { return TimelineOp{c, start, 0, true, end}; }

std::vector<TimeNs> endsOf(std::vector<TimelineOp> ops) {
  computeEnds(ops, kSlowdowns);
  std::vector<TimeNs> ends;
  for (const TimelineOp& op : ops) ends.push_back(op.end);
  return ends;
}

TEST(Timeline, AnOpAloneRunsAtFullSpeed) {
  EXPECT_EQ(endsOf({compute(5 * kMs, 2 * kMs)}), (std::vector<TimeNs>{7 * kMs}));
  EXPECT_EQ(endsOf({compute(0, kMs), compute(0, 3 * kMs)}), (std::vector<TimeNs>{kMs, 3 * kMs}))
      << "compute does not slow compute (the engine serialises it)";
}

TEST(Timeline, OverlappingClassesSlowEachOtherWhileTheyOverlap) {
  // Both start together: compute ends at 22 ms; communication did 22/1.15 ms of its work by
  // then and does the rest at full speed.
  const std::vector<TimeNs> ends = endsOf({compute(0, 20 * kMs), communication(0, 20 * kMs)});
  EXPECT_EQ(ends[0], 22 * kMs);
  EXPECT_EQ(ends[1], 22 * kMs + std::llround(20e6 - 22e6 / 1.15));
}

TEST(Timeline, AnOpStartingLaterSlowsOnlyTheRestOfTheOther) {
  // Communication from 0 to 10 ms alone; compute joins at 4 ms for 2 ms of work.
  const std::vector<TimeNs> ends = endsOf({communication(0, 10 * kMs), compute(4 * kMs, 2 * kMs)});
  EXPECT_EQ(ends[1], 4 * kMs + 2200 * 1000);                                  // 2 ms x 1.10
  EXPECT_EQ(ends[0], 4 * kMs + 2200 * 1000 + std::llround(6e6 - 2.2e6 / 1.15));  // the rest alone
}

TEST(Timeline, TheOrderOpsAreGivenInDoesNotMatter) {
  std::vector<TimelineOp> ops{communication(0, 3 * kMs), compute(kMs, 2 * kMs), compute(3500 * 1000, kMs),
                              communication(4 * kMs, 3 * kMs), compute(9 * kMs, kMs)};
  const std::vector<TimeNs> expected = endsOf(ops);
  std::vector<std::size_t> order{0, 1, 2, 3, 4};
  while (std::next_permutation(order.begin(), order.end())) {
    std::vector<TimelineOp> permuted;
    for (std::size_t i : order) permuted.push_back(ops[i]);
    computeEnds(permuted, kSlowdowns);
    for (std::size_t k = 0; k < order.size(); ++k) EXPECT_EQ(permuted[k].end, expected[order[k]]);
  }
}

TEST(Timeline, CompletedOpsTakePartThroughTheirIntervalOnly) {
  // A collective that ended at 5 ms slows a kernel that started at 4 ms for its first 1 ms.
  std::vector<TimelineOp> ops{completedOp(WorkClass::Communication, 0, 5 * kMs), compute(4 * kMs, 2 * kMs)};
  computeEnds(ops, kSlowdowns);
  EXPECT_EQ(ops[0].end, 5 * kMs) << "a completed op's end is final";
  EXPECT_EQ(ops[1].end, 5 * kMs + std::llround(2e6 - 1e6 / 1.1));
  // One that ended before the kernel started changes nothing.
  EXPECT_EQ(endsOf({completedOp(WorkClass::Communication, 0, 4 * kMs), compute(4 * kMs, 2 * kMs)})[1], 6 * kMs);
}

TEST(Timeline, AddingAnOpNeverMovesAnEndEarlier) {
  // What lets the scheduler treat a current end as a lower bound (bounds.hpp).
  std::vector<TimelineOp> ops{communication(0, 3 * kMs), compute(kMs, 2 * kMs), communication(3 * kMs, 3 * kMs)};
  const std::vector<TimeNs> before = endsOf(ops);
  for (TimeNs start = 0; start <= 8 * kMs; start += kMs / 2) {
    for (WorkClass c : {WorkClass::Compute, WorkClass::Communication}) {
      std::vector<TimelineOp> more = ops;
      more.push_back(TimelineOp{c, start, kMs});
      const std::vector<TimeNs> after = endsOf(more);
      for (std::size_t i = 0; i < before.size(); ++i) EXPECT_GE(after[i], before[i]) << "op " << i << " start " << start;
    }
  }
}

TEST(Timeline, ComputeIsSlowedByTheWidestCollectiveRunningInProportionToItsWeight) {
  // A collective on 4 of 16 channels (weight 1/4) overlapping 2 ms of compute: 2 ms x (1 + 0.10 / 4).
  TimelineOp narrow = communication(0, 10 * kMs);
  narrow.weight = 0.25;
  EXPECT_EQ(endsOf({narrow, compute(0, 2 * kMs)})[1], 2050 * 1000);
  // With a collective of weight 2 as well, the larger weight counts, not the sum.
  TimelineOp wide = communication(0, 10 * kMs);
  wide.weight = 2.0;
  EXPECT_EQ(endsOf({narrow, wide, compute(0, 2 * kMs)})[2], 2400 * 1000);
}

}  // namespace
}  // namespace simgpu::detail
