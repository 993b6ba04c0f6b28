// Per-rank, per-iteration time metrics on hand-built runs whose answers are known exactly.
#include <gtest/gtest.h>

#include "run_sketch.hpp"
#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/report.hpp"

namespace syncopate::analyzer {
namespace {

using testing::RunSketch;
using testing::us;

// Two ranks, two iterations; the all-reduce runs on its own stream entirely inside backward.
RunModel allOverlapped() {
  RunSketch s;
  for (int r = 0; r < 2; ++r) {
    const Index rank = s.rank(r);
    const Index compute = s.stream(rank, 7), comm = s.stream(rank, 20);
    const Index t = s.thread(rank, 100 + r);
    for (int k = 0; k < 2; ++k) {
      const std::int64_t base = us(100 * k);
      s.range(rank, t, "ProfilerStep#" + std::to_string(k), base, base + us(100));
      const Index c1 = s.call(t, "cudaLaunchKernel", base + us(1), base + us(2));
      const Index c2 = s.call(t, "cudaLaunchKernel", base + us(2), base + us(3));
      const Index c3 = s.call(t, "ncclAllReduce", base + us(3), base + us(4));
      s.kernel(compute, "fwd", base + us(10), base + us(40), c1);
      s.kernel(compute, "bwd", base + us(40), base + us(80), c2);
      s.allReduce(comm, 1, r, 2, k, base + us(50), base + us(70), 1024, c3);
    }
  }
  return s.build();
}

TEST(Metrics, AllOverlappedCommunicationIsFullyHidden) {
  const RunModel m = allOverlapped();
  auto a = analyze(m);
  ASSERT_TRUE(a.ok()) << a.message();
  EXPECT_EQ(a->iterations.source, IterationSource::Markers);
  ASSERT_EQ(a->rank_iterations.size(), 4u);
  // Iteration 0 ends where iteration 1's first op starts; the last ends with its last op.
  const auto& first = *a->iteration(0)[0];
  EXPECT_EQ(first.window.start, us(10));
  EXPECT_EQ(first.window.end, us(110));
  EXPECT_EQ(first.time.window_ns, us(100));
  EXPECT_EQ(first.time.compute_ns, us(70));
  EXPECT_EQ(first.time.communication_ns, us(20));
  EXPECT_EQ(first.time.overlapped_communication_ns, us(20));
  EXPECT_EQ(first.time.exposed_communication_ns, 0);
  EXPECT_DOUBLE_EQ(first.time.overlapRatio(), 1.0);
  EXPECT_EQ(first.time.busy_ns, us(70));
  EXPECT_EQ(first.time.idle_ns, us(30));
  EXPECT_EQ(first.time.non_compute_ns, 0);
  const auto& last = *a->iteration(1)[1];
  EXPECT_EQ(last.rank, 1u);
  EXPECT_EQ(last.window.start, us(110));
  EXPECT_EQ(last.window.end, us(180));
  EXPECT_EQ(last.time.idle_ns, 0);
  // Per rank: means over the two iterations; aggregate: mean over ranks.
  EXPECT_EQ(a->ranks[0].mean.window_ns, us(85));
  EXPECT_EQ(a->ranks[0].mean.idle_ns, us(15));
  EXPECT_EQ(a->aggregate.compute_ns, us(70));
  EXPECT_EQ(a->aggregate.exposed_communication_ns, 0);
  EXPECT_DOUBLE_EQ(a->aggregate.overlapRatio(), 1.0);
  // Kernel types with overlaps (HTA): compute alone 50, compute with communication 20, per iteration.
  const auto& kt = a->ranks[0].kernel_types;
  EXPECT_EQ(kt[0b001], us(100));
  EXPECT_EQ(kt[0b011], us(40));
  EXPECT_EQ(kt[0b010], 0);
  EXPECT_EQ(kt[0b000], us(30));
}

TEST(Metrics, SerialCommunicationIsExposed) {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index st = s.stream(rank, 7);
  const Index t = s.thread(rank, 1);
  s.range(rank, t, "ProfilerStep#3", 0, us(100));
  s.kernel(st, "compute", us(0), us(50));
  s.allReduce(st, 5, 0, 1, 0, us(50), us(80));
  s.op(st, trace::OpKind::Memcpy, "Memcpy DtoH", us(80), us(90), kNone, 4096);
  const RunModel m = s.build();
  auto a = analyze(m);
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->rank_iterations.size(), 1u);
  const TimeBreakdown& t3 = a->rank_iterations[0].time;
  EXPECT_EQ(a->rank_iterations[0].window.number, 3);
  EXPECT_EQ(t3.window_ns, us(90));
  EXPECT_EQ(t3.compute_ns, us(50));
  EXPECT_EQ(t3.communication_ns, us(30));
  EXPECT_EQ(t3.memory_ns, us(10));
  EXPECT_EQ(t3.overlapped_communication_ns, 0);
  EXPECT_EQ(t3.exposed_communication_ns, us(30));
  EXPECT_DOUBLE_EQ(t3.overlapRatio(), 0.0);
  EXPECT_EQ(t3.idle_ns, 0);
  EXPECT_EQ(t3.non_compute_ns, us(40));
}

// A sharded step: the all-gather before forward waits alone, the reduce-scatter runs past the
// end of backward, an all-reduce on a third stream overlaps the reduce-scatter's tail, and a send
// ends the step. Each group's exposed time is its own ops less compute; the reduce-scatter's
// and the all-reduce's common 5 us count for both, once in the total.
TEST(Metrics, ExposedCommunicationOfEachCollectiveGroupApart) {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index compute = s.stream(rank, 7), gather = s.stream(rank, 20), other = s.stream(rank, 30);
  const Index t = s.thread(rank, 1);
  s.range(rank, t, "ProfilerStep#0", 0, us(100));
  s.collective(gather, trace::CollType::AllGather, 5, 0, 1, 0, us(0), us(10), 256, trace::DataType::Float32);
  s.kernel(compute, "fwd", us(10), us(40));
  s.kernel(compute, "bwd", us(40), us(80));
  s.collective(gather, trace::CollType::ReduceScatter, 5, 0, 1, 1, us(60), us(90), 256, trace::DataType::Float32);
  s.allReduce(other, 6, 0, 1, 0, us(85), us(95));
  s.collective(other, trace::CollType::Send, 7, 0, 2, 0, us(95), us(100), 16, trace::DataType::Float32, kNone, 1);
  const RunModel m = s.build();
  auto a = analyze(m);
  ASSERT_TRUE(a.ok()) << a.message();
  ASSERT_EQ(a->rank_iterations.size(), 1u);
  const TimeBreakdown& t0 = a->rank_iterations[0].time;
  EXPECT_EQ(t0.exposed_communication_ns, us(30));
  const auto exposed = [&](CollectiveGroup g) { return t0.exposed_by_collective_ns[static_cast<std::size_t>(g)]; };
  EXPECT_EQ(exposed(CollectiveGroup::AllGather), us(10));
  EXPECT_EQ(exposed(CollectiveGroup::ReduceScatter), us(10));
  EXPECT_EQ(exposed(CollectiveGroup::AllReduce), us(10));
  EXPECT_EQ(exposed(CollectiveGroup::Other), us(5));

  const nlohmann::json j = analysisToJson(m, *a);
  const nlohmann::json& by = j.at("aggregate").at("exposed_by_collective_ms");
  EXPECT_DOUBLE_EQ(by.at("all_gather").get<double>(), 0.010);
  EXPECT_DOUBLE_EQ(by.at("reduce_scatter").get<double>(), 0.010);
  EXPECT_DOUBLE_EQ(by.at("all_reduce").get<double>(), 0.010);
  EXPECT_DOUBLE_EQ(by.at("other").get<double>(), 0.005);
  const std::string text = analysisToText(m, *a);
  EXPECT_NE(text.find("      reduce-scatter           0.010 ms   10.0%\n"
                      "      all-gather               0.010 ms   10.0%\n"),
            std::string::npos)
      << text;
}

// A step whose exposed time is all all-reduce lists no groups in the text report.
TEST(Metrics, AllReduceOnlyExposureListsNoGroups) {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index st = s.stream(rank, 7);
  const Index t = s.thread(rank, 1);
  s.range(rank, t, "ProfilerStep#0", 0, us(100));
  s.kernel(st, "compute", us(0), us(50));
  s.allReduce(st, 5, 0, 1, 0, us(50), us(80));
  const RunModel m = s.build();
  auto a = analyze(m);
  ASSERT_TRUE(a.ok()) << a.message();
  EXPECT_EQ(a->aggregate.exposed_by_collective_ns[static_cast<std::size_t>(CollectiveGroup::AllReduce)], us(30));
  EXPECT_EQ(analysisToText(m, *a).find("      all-reduce"), std::string::npos);
}

// Five kernels, each launched 3us after the previous one finished: the host is the bottleneck.
RunModel hostBound() {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index st = s.stream(rank, 7);
  const Index t = s.thread(rank, 1);
  s.range(rank, t, "ProfilerStep#1", 0, us(50));
  for (int i = 0; i < 5; ++i) {
    const Index c = s.call(t, "cudaLaunchKernel", us(10 * i), us(10 * i + 2));
    s.kernel(st, "gemm", us(10 * i + 3), us(10 * i + 7), c);
  }
  return s.build();
}

TEST(Metrics, HostBoundRankIsMostlyIdleAndItsGapsAreHostWait) {
  const RunModel m = hostBound();
  auto a = analyze(m);
  ASSERT_TRUE(a.ok());
  const TimeBreakdown& t = a->rank_iterations[0].time;
  EXPECT_EQ(t.window_ns, us(44));
  EXPECT_EQ(t.compute_ns, us(20));
  EXPECT_EQ(t.idle_ns, us(24));
  ASSERT_EQ(a->ranks[0].streams.size(), 1u);
  const StreamIdle& idle = a->ranks[0].streams[0];
  EXPECT_EQ(idle.ops, 5u);
  EXPECT_EQ(idle.busy_ns, us(20));
  EXPECT_EQ(idle.host_wait_ns, us(24));
  EXPECT_EQ(idle.kernel_wait_ns, 0);
  EXPECT_EQ(idle.other_ns, 0);
  ASSERT_EQ(a->kernels.size(), 1u);
  EXPECT_EQ(m.str(a->kernels[0].name), "gemm");
  EXPECT_EQ(a->kernels[0].count, 5);
  EXPECT_EQ(a->kernels[0].total_ns, us(20));
  EXPECT_DOUBLE_EQ(a->kernels[0].mean_ns, 4000.0);
  EXPECT_DOUBLE_EQ(a->kernels[0].stddev_ns, 0.0);
}

TEST(Metrics, StreamIdleSeparatesKernelWaitFromOther) {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index st = s.stream(rank, 7);
  const Index t = s.thread(rank, 1);
  s.range(rank, t, "ProfilerStep#1", 0, us(100));
  const Index c0 = s.call(t, "cudaLaunchKernel", us(0), us(1));
  const Index c1 = s.call(t, "cudaLaunchKernel", us(1), us(2));
  const Index c2 = s.call(t, "cudaLaunchKernel", us(2), us(3));
  s.kernel(st, "a", us(10), us(20), c0);
  s.kernel(st, "b", us(20) + 20, us(30), c1);   // 20 ns after: launch overhead
  s.kernel(st, "c", us(40), us(50), c2);        // launched long before, started 10us late
  const RunModel m = s.build();
  auto a = analyze(m);
  ASSERT_TRUE(a.ok());
  const StreamIdle& idle = a->ranks[0].streams[0];
  EXPECT_EQ(idle.host_wait_ns, 0);
  EXPECT_EQ(idle.kernel_wait_ns, 20);
  EXPECT_EQ(idle.other_ns, us(10));
  EXPECT_EQ(idle.idleNs(), us(10) + 20);
}

// Kernels of a second that differ by a nanosecond: the sums of squares (3·10¹⁸) are beyond
// a double's 53 bits, so the variance, computed from them in doubles, would be lost to
// rounding; counted in integers it is exact, and so is what ranks' tallies add up to.
TEST(Metrics, KernelStatisticsAreExactAndRankTalliesAddUpToThem) {
  constexpr std::int64_t kSecond = 1'000'000'000;
  RunSketch s;
  const std::int64_t durations[2][2] = {{kSecond + 1, kSecond + 2}, {kSecond + 3, 0}};
  for (int r = 0; r < 2; ++r) {
    const Index rank = s.rank(r);
    const Index st = s.stream(rank, 7);
    const Index t = s.thread(rank, 1);
    s.range(rank, t, "ProfilerStep#1", 0, 10 * kSecond);
    std::int64_t at = us(10);
    for (const std::int64_t d : durations[r]) {
      if (d == 0) continue;
      const Index c = s.call(t, "cudaLaunchKernel", at - us(5), at - us(4));
      s.kernel(st, "gemm", at, at + d, c);
      at += d + us(10);
    }
  }
  const RunModel m = s.build();
  auto a = analyze(m);
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->kernels.size(), 1u);
  const KernelStat& k = a->kernels[0];
  EXPECT_EQ(k.count, 3);
  EXPECT_EQ(k.total_ns, 3 * kSecond + 6);
  EXPECT_EQ(k.min_ns, kSecond + 1);
  EXPECT_EQ(k.max_ns, kSecond + 3);
  EXPECT_EQ(k.ranks, 2);
  EXPECT_DOUBLE_EQ(k.mean_ns, static_cast<double>(kSecond + 2));
  EXPECT_DOUBLE_EQ(k.stddev_ns, 1.0);

  KernelTallySum sum;
  for (Index r = 0; r < 2; ++r) {
    const RankPart part = analyzeRankPart(m, r, a->iterations.per_rank[r], a->options);
    ASSERT_EQ(part.kernels.size(), 1u);
    EXPECT_EQ(part.kernels[0].count, r == 0 ? 2 : 1);
    sum.add(part.kernels);
  }
  const std::vector<KernelStat> summed = sum.stats(m.strings);
  ASSERT_EQ(summed.size(), 1u);
  EXPECT_EQ(summed[0].count, k.count);
  EXPECT_EQ(summed[0].total_ns, k.total_ns);
  EXPECT_EQ(summed[0].ranks, k.ranks);
  EXPECT_EQ(summed[0].stddev_ns, k.stddev_ns);
}

}  // namespace
}  // namespace syncopate::analyzer
