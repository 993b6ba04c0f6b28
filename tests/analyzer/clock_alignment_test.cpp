#include "syncopate/analyzer/clock_alignment.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "run_sketch.hpp"

namespace syncopate::analyzer {
namespace {

using testing::RunSketch;
using testing::us;

// Two hosts whose realtime offsets are known, and whose realtime clocks disagree by 300 ns:
// the ends of their collectives (equal in truth) land 300 ns apart until refined.
RunModel twoHosts(int collectives, std::int64_t error_ns) {
  RunSketch s;
  const Index r0 = s.rank(0, "hostA", 1000), r1 = s.rank(1, "hostB", 5000);
  const Index a = s.stream(r0, 1), b = s.stream(r1, 1);
  for (int k = 0; k < collectives; ++k) {
    const std::int64_t end = us(100 * (k + 1));
    s.allReduce(a, 1, 0, 2, k, end - us(20) - 1000, end - 1000);
    s.allReduce(b, 1, 1, 2, k, end - us(10) - 5000 + error_ns, end - 5000 + error_ns);
  }
  return s.build();
}

TEST(ClockAlignment, RefinesHostOffsetsFromCollectiveEndTimes) {
  RunModel m = twoHosts(5, 300);
  const ClockAlignment c = alignClocks(m);
  ASSERT_EQ(c.hosts.size(), 2u);
  EXPECT_EQ(c.hosts[0].host, "hostA");
  EXPECT_EQ(c.hosts[0].refinement_ns, 0);
  EXPECT_EQ(c.hosts[1].refinement_ns, -300);
  EXPECT_EQ(c.hosts[1].samples, 5u);
  EXPECT_TRUE(c.refined);
  EXPECT_EQ(c.collectives_used, 5u);
  EXPECT_EQ(c.residual_before_median_ns, 300);
  EXPECT_EQ(c.residual_median_ns, 0);
  EXPECT_EQ(c.residual_max_ns, 0);
  EXPECT_EQ(m.ranks[0].to_aligned_ns, 1000);
  EXPECT_EQ(m.ranks[1].to_aligned_ns, 4700);
  // Aligned: both ranks' collectives end at the same instant; raw = aligned - to_aligned_ns.
  const Index op0 = m.ranks[0].first_op, op1 = m.ranks[1].first_op;
  EXPECT_EQ(m.ops.end[op0], us(100));
  EXPECT_EQ(m.ops.end[op1], us(100));
  EXPECT_EQ(m.ops.end[op1] - m.ranks[1].to_aligned_ns, us(100) - 5000 + 300);
  EXPECT_EQ(m.clock.hosts[1].refinement_ns, -300);
}

// Eight hosts stamping wall-clock time (about 1.8e18 ns, as real runs do): the mean of seven
// such end times does not fit in 64 bits if summed as it is. Host 5's clock is 300 ns ahead.
TEST(ClockAlignment, RefinesWallClockTimesOfManyHosts) {
  constexpr std::int64_t kWallClock = 1'800'000'000'000'000'000;
  constexpr int kHosts = 8;
  RunSketch s;
  std::vector<Index> streams;
  for (int r = 0; r < kHosts; ++r) {
    const Index rank = s.rank(r, "host" + std::to_string(r), kWallClock + 1000 * r);
    streams.push_back(s.stream(rank, 1));
  }
  for (int k = 0; k < 5; ++k) {
    const std::int64_t end = us(100 * (k + 1));
    for (int r = 0; r < kHosts; ++r) {
      const std::int64_t raw_end = end - 1000 * r + (r == 5 ? 300 : 0);
      s.allReduce(streams[r], 1, r, kHosts, k, raw_end - us(10), raw_end);
    }
  }
  RunModel m = s.build();
  const ClockAlignment c = alignClocks(m);
  ASSERT_EQ(c.hosts.size(), 8u);
  EXPECT_TRUE(c.refined);
  for (int h = 0; h < kHosts; ++h) EXPECT_EQ(c.hosts[h].refinement_ns, h == 5 ? -300 : 0) << "host " << h;
  EXPECT_EQ(c.residual_max_ns, 0);
}

// Collectives of a communicator without the reference host (ranks 1-4: host B twice, then host
// C twice): the mean of the other hosts' end times is rounded towards zero from the first of
// them, and each host's pair ends 3 ns apart, so where that mean is taken from shows.
TEST(ClockAlignment, MeanOfOtherHostsIsRoundedFromTheirFirstEndTime) {
  RunSketch s;
  const Index a = s.rank(0, "hostA");
  s.kernel(s.stream(a, 1), "k", us(1), us(2));
  std::vector<Index> streams;
  for (int r = 1; r <= 4; ++r) streams.push_back(s.stream(s.rank(r, r <= 2 ? "hostB" : "hostC"), 1));
  for (int k = 0; k < 5; ++k) {
    const std::int64_t end = us(100 * (k + 1));
    const std::int64_t ends[] = {end, end - 3, end + 100, end + 97};
    for (int i = 0; i < 4; ++i) s.allReduce(streams[i], 7, i, 4, k, end - us(10), ends[i]);
  }
  RunModel m = s.build();
  const ClockAlignment c = alignClocks(m);
  ASSERT_EQ(c.hosts.size(), 3u);
  EXPECT_EQ(c.hosts[1].host, "hostB");
  // B: C's mean from its first end is end + 100 + (-3 / 2) = end + 99; votes 99 and 102, median 100.
  EXPECT_EQ(c.hosts[1].refinement_ns, 100);
  EXPECT_EQ(c.hosts[1].samples, 10u);
  // C: B's ends moved by 100 give end + 100 + (-3 / 2) = end + 99; votes -1 and 2, median 0.
  EXPECT_EQ(c.hosts[2].refinement_ns, 0);
  EXPECT_EQ(c.hosts[2].samples, 10u);
  EXPECT_EQ(c.hosts[0].refinement_ns, 0);
}

TEST(ClockAlignment, TooFewSharedCollectivesKeepTheRealtimeOffset) {
  RunModel m = twoHosts(2, 300);
  const ClockAlignment c = alignClocks(m);
  EXPECT_FALSE(c.refined);
  EXPECT_EQ(c.hosts[1].refinement_ns, 0);
  EXPECT_EQ(c.residual_median_ns, 300);
  ASSERT_FALSE(m.diagnostics.empty());
  EXPECT_NE(m.diagnostics.back().message.find("hostB"), std::string::npos);
}

TEST(ClockAlignment, RanksOfOneHostShareOneClock) {
  RunSketch s;
  const Index r0 = s.rank(0, "h", 1000), r1 = s.rank(1, "h", 1010), r2 = s.rank(2, "h", 1004);
  for (Index r : {r0, r1, r2}) s.kernel(s.stream(r, 1), "k", us(1), us(2));
  RunModel m = s.build();
  const ClockAlignment c = alignClocks(m);
  ASSERT_EQ(c.hosts.size(), 1u);
  EXPECT_EQ(c.hosts[0].realtime_offset_ns, 1004);  // the median
  for (const RankInfo& r : m.ranks) EXPECT_EQ(r.to_aligned_ns, 1004);
  EXPECT_FALSE(c.refined);
}

TEST(ClockAlignment, ShiftRankMovesEveryTableOfThatRankOnly) {
  RunSketch s;
  const Index r0 = s.rank(0), r1 = s.rank(1);
  const Index t0 = s.thread(r0, 1);
  s.kernel(s.stream(r0, 1), "k", us(1), us(2), s.call(t0, "launch", 0, 10));
  s.range(r0, t0, "ProfilerStep#1", 0, us(5));
  s.hostSync(r0, kNone, trace::SyncKind::Device, kNone, us(3), us(4));
  s.kernel(s.stream(r1, 1), "k", us(1), us(2));
  RunModel m = s.build();
  shiftRank(m, 0, 7);
  EXPECT_EQ(m.ops.start[0], us(1) + 7);
  EXPECT_EQ(m.api_calls.end[0], 17);
  EXPECT_EQ(m.ranges.start[0], 7);
  EXPECT_EQ(m.host_syncs.end[0], us(4) + 7);
  EXPECT_EQ(m.ops.start[1], us(1));
  EXPECT_EQ(m.ranks[0].to_aligned_ns, 7);
}

}  // namespace
}  // namespace syncopate::analyzer
