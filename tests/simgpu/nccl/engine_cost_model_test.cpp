// The alpha-beta cost model against the formulas of docs/simgpu.md, worked out by hand.
#include "simgpu/nccl/cost_model.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace simgpu::nccl {
namespace {

CostParams params() {
  CostParams p;
  p.links.intra_process = {1000, 1e11};  // 1 us, 100 GB/s
  p.links.intra_host = {2000, 5e10};     // 2 us, 50 GB/s
  p.links.inter_host = {10000, 1e10};    // 10 us, 10 GB/s
  return p;
}

std::vector<RankPlace> ranks(int n, int ranks_per_host, bool one_process) {
  std::vector<RankPlace> out;
  for (int r = 0; r < n; ++r) out.push_back(RankPlace{one_process ? 1 : 100 + r, r / ranks_per_host});
  return out;
}

TEST(CostModel, LinkLevelFollowsProcessAndHost) {
  EXPECT_EQ(linkLevel({1, 0}, {1, 0}), LinkLevel::IntraProcess);
  EXPECT_EQ(linkLevel({1, 0}, {2, 0}), LinkLevel::IntraHost);
  EXPECT_EQ(linkLevel({1, 0}, {1, 1}), LinkLevel::InterHost);  // emulated hosts split one process too
}

TEST(CostModel, RingAllReduceUsesTheSlowestLinkOfTheRing) {
  const auto p = params();
  // 4 processes on one host: 2(n-1) = 6 hops of 2 us, 2(n-1)/n * 1e9 B at 50 GB/s = 30 ms.
  EXPECT_EQ(collectiveDurationNs(p, CollKind::AllReduce, 1'000'000'000, ranks(4, 8, false)), 6 * 2000 + 30'000'000);
  // Two emulated hosts: the ring crosses the inter-host link.
  EXPECT_EQ(collectiveDurationNs(p, CollKind::AllReduce, 1'000'000'000, ranks(4, 2, false)), 6 * 10000 + 150'000'000);
  // One process, several devices.
  EXPECT_EQ(collectiveDurationNs(p, CollKind::AllReduce, 1'000'000, ranks(2, 8, true)), 2 * 1000 + 10'000);
}

TEST(CostModel, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::AllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::AllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::ReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::Broadcast, 4), 1.0);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::Reduce, 4), 1.0);
  EXPECT_EQ(collectiveBytes(CollKind::AllGather, 100, 4, 4), 1600u);
  EXPECT_EQ(collectiveBytes(CollKind::ReduceScatter, 100, 2, 8), 1600u);
  EXPECT_EQ(collectiveBytes(CollKind::AllReduce, 100, 8, 8), 800u);
}

TEST(CostModel, OtherCollectives) {
  const auto p = params();
  const auto four = ranks(4, 8, false);
  // AllGather of 4 x 250 MB: 3 hops, 3/4 * 1e9 B at 50 GB/s.
  EXPECT_EQ(collectiveDurationNs(p, CollKind::AllGather, 1'000'000'000, four), 3 * 2000 + 15'000'000);
  EXPECT_EQ(collectiveDurationNs(p, CollKind::ReduceScatter, 1'000'000'000, four), 3 * 2000 + 15'000'000);
  // Broadcast: 3 hops and the whole message once.
  EXPECT_EQ(collectiveDurationNs(p, CollKind::Broadcast, 1'000'000'000, four), 3 * 2000 + 20'000'000);
  EXPECT_EQ(collectiveDurationNs(p, CollKind::Reduce, 1'000'000'000, four), 3 * 2000 + 20'000'000);
}

TEST(CostModel, BytesScaleCostsEveryByteThatManyTimes) {
  auto p = params();
  p.bytes_scale = 1000.0;
  EXPECT_EQ(collectiveDurationNs(p, CollKind::AllReduce, 1'000'000, ranks(2, 8, false)), 2 * 2000 + 20'000'000);
  EXPECT_EQ(p2pDurationNs(p, 1'000'000, LinkLevel::InterHost), 10000 + 100'000'000);
}

TEST(CostModel, TreeAllReduceTakesLogarithmicHops) {
  auto p = params();
  p.algorithm = Algorithm::Tree;
  // 8 ranks: 2 * 3 hops, the message once over the slowest pair (inter-host).
  EXPECT_EQ(collectiveDurationNs(p, CollKind::AllReduce, 1'000'000, ranks(8, 4, false)), 6 * 10000 + 100'000);
  // Tree only changes all-reduce.
  EXPECT_EQ(collectiveDurationNs(p, CollKind::AllGather, 1'000'000, ranks(2, 8, false)), 2000 + 10'000);
}

TEST(CostModel, OneRankCostsOneLocalHop) {
  EXPECT_EQ(collectiveDurationNs(params(), CollKind::AllReduce, 1 << 30, ranks(1, 8, false)), 1000);
}

TEST(CostModel, ChannelsBoundTheBandwidthUntilTheySaturateTheLink) {
  auto p = params();
  const auto four = ranks(4, 2, false);  // the ring crosses the 10 GB/s link between hosts
  const std::int64_t full = collectiveDurationNs(p, CollKind::AllReduce, 1'000'000'000, four);
  p.per_channel_bandwidth = 2.5e9;
  // 2 channels move 5 GB/s: 1.5e9 B take 300 ms; 4 or more saturate the link.
  EXPECT_EQ(collectiveDurationNs(p, CollKind::AllReduce, 1'000'000'000, four, 2), 6 * 10000 + 300'000'000);
  EXPECT_EQ(collectiveDurationNs(p, CollKind::AllReduce, 1'000'000'000, four, 4), full);
  EXPECT_EQ(collectiveDurationNs(p, CollKind::AllReduce, 1'000'000'000, four, 32), full);
  EXPECT_EQ(collectiveDurationNs(p, CollKind::AllReduce, 1'000'000'000, four, 0), full) << "no count: the link";
}

}  // namespace
}  // namespace simgpu::nccl
