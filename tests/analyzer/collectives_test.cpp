#include "syncopate/analyzer/collectives.hpp"

#include <gtest/gtest.h>

#include "scenarios.hpp"
#include "syncopate/analyzer/analysis.hpp"

namespace syncopate::analyzer {
namespace {

using testing::RunSketch;
using testing::us;

TEST(Collectives, StragglerArrivalSkewWaitAndBandwidth) {
  const RunModel m = testing::straggler();
  const CollectiveAnalysis c = analyzeCollectives(m);
  ASSERT_EQ(c.calls.size(), 1u);
  const CollectiveTiming& t = c.calls[0];
  EXPECT_TRUE(t.complete);
  EXPECT_EQ(t.ranks, 2);
  EXPECT_EQ(t.first_arrival, us(45));
  EXPECT_EQ(t.last_arrival, us(60));
  EXPECT_EQ(t.arrival_skew_ns, us(15));
  EXPECT_EQ(t.straggler, 1u);
  EXPECT_EQ(t.lateness_ns, us(15));
  EXPECT_EQ(t.wait_ns, us(15));
  EXPECT_EQ(t.time_ns, us(15));
  EXPECT_EQ(t.bytes, 1'500'000);                 // 375000 floats
  EXPECT_DOUBLE_EQ(t.algbw_gbps, 100.0);         // 1.5 MB in 15 us
  EXPECT_DOUBLE_EQ(t.busbw_gbps, 100.0);         // 2(n-1)/n = 1 for n = 2
  EXPECT_EQ(c.complete, 1);
  EXPECT_EQ(c.ranks[1].times_last, 1);
  EXPECT_EQ(c.ranks[1].lateness_ns, us(15));
  EXPECT_EQ(c.ranks[1].wait_caused_ns, us(15));
  EXPECT_EQ(c.ranks[0].wait_ns, us(15));
  EXPECT_EQ(c.ranks[1].wait_ns, 0);
  EXPECT_EQ(c.ranks[0].times_last, 0);

  auto a = analyze(m);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->rank_iterations[0].collective_wait_ns, us(15));
  EXPECT_EQ(a->rank_iterations[1].collective_wait_ns, 0);
  // Rank 0 communicates 30us (15 of them waiting), rank 1 15us; neither overlaps.
  EXPECT_EQ(a->rank_iterations[0].time.exposed_communication_ns, us(30));
  EXPECT_EQ(a->rank_iterations[1].time.exposed_communication_ns, us(15));
  EXPECT_EQ(a->rank_iterations[1].time.compute_ns, us(65));
}

TEST(Collectives, NcclTestsFormulas) {
  using trace::CollType;
  using trace::DataType;
  EXPECT_EQ(ncclTestsBytes(CollType::AllReduce, 1000, DataType::Float32, 8), 4000);
  EXPECT_EQ(ncclTestsBytes(CollType::AllGather, 1000, DataType::Bfloat16, 8), 16000);
  EXPECT_EQ(ncclTestsBytes(CollType::ReduceScatter, 1000, DataType::Float32, 4), 16000);
  EXPECT_EQ(ncclTestsBytes(CollType::Broadcast, 10, DataType::Int8, 4), 10);
  EXPECT_EQ(ncclTestsBytes(CollType::Gather, 100, DataType::Float64, 4), 3200);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollType::Scatter, 4), 0.75);
  EXPECT_EQ(ncclTestsBytes(CollType::AllReduce, kUnknown, DataType::Float32, 4), kUnknown);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollType::AllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollType::AllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollType::ReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollType::Broadcast, 4), 1.0);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollType::Send, 2), 1.0);
}

TEST(Collectives, PartialCallsAreMeasuredOverThePresentRanks) {
  RunSketch s;
  const Index r0 = s.rank(0), r1 = s.rank(1);
  const Index a = s.stream(r0, 1), b = s.stream(r1, 1);
  // A 4-rank communicator of which only two ranks were recorded.
  s.allReduce(a, 3, 0, 4, 0, us(10), us(30), 1000);
  s.allReduce(b, 3, 1, 4, 0, us(20), us(30), 1000);
  const RunModel m = s.build();
  const CollectiveAnalysis c = analyzeCollectives(m);
  ASSERT_EQ(c.calls.size(), 1u);
  EXPECT_FALSE(c.calls[0].complete);
  EXPECT_EQ(c.partial, 1);
  EXPECT_EQ(c.calls[0].straggler, 1u);
  EXPECT_EQ(c.calls[0].time_ns, us(10));
  EXPECT_DOUBLE_EQ(c.calls[0].busbw_gbps, 4000.0 / 10000.0 * 1.5);  // n = 4 from the communicator
  // Partial calls do not count towards anyone's straggler record.
  EXPECT_EQ(c.ranks[1].times_last, 0);
}

}  // namespace
}  // namespace syncopate::analyzer
