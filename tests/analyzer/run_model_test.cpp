#include "syncopate/analyzer/run_model.hpp"

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "run_sketch.hpp"

namespace syncopate::analyzer {
namespace {

using testing::RunSketch;
using testing::us;

TEST(StringTable, InternsOnceAndKeepsViewsValid) {
  StringTable t;
  EXPECT_EQ(t.intern(""), 0u);
  const StringId a = t.intern("ncclKernel_AllReduce");
  for (int i = 0; i < 20000; ++i) t.intern("kernel_" + std::to_string(i));  // several chunks
  EXPECT_EQ(t.intern("ncclKernel_AllReduce"), a);
  EXPECT_EQ(t[a], "ncclKernel_AllReduce");
  EXPECT_EQ(t.find("kernel_19999").has_value(), true);
  EXPECT_FALSE(t.find("absent").has_value());
  StringTable moved = std::move(t);
  EXPECT_EQ(moved[a], "ncclKernel_AllReduce");
}

TEST(RunModelBuilder, SortsTablesAndKeepsReferencesRight) {
  RunSketch s;
  // Rank 1 added before rank 0, ops added out of order.
  const Index r1 = s.rank(1), r0 = s.rank(0);
  const Index s1 = s.stream(r1, 7), s0b = s.stream(r0, 20), s0a = s.stream(r0, 7);
  const Index t0 = s.thread(r0, 100);
  const Index c2 = s.call(t0, "cudaLaunchKernel", us(5), us(6));
  const Index c1 = s.call(t0, "cudaLaunchKernel", us(1), us(2));
  s.kernel(s0a, "late", us(10), us(20), c2);
  s.kernel(s0a, "early", us(3), us(4), c1);
  s.kernel(s0b, "other", us(0), us(1));
  s.kernel(s1, "remote", us(0), us(1));
  RunModel m = s.build();

  ASSERT_EQ(m.ranks.size(), 2u);
  EXPECT_EQ(m.ranks[0].rank, 0);
  EXPECT_EQ(m.ranks[1].rank, 1);
  ASSERT_EQ(m.streams.size(), 3u);
  EXPECT_EQ(m.streams[0].handle, 7);  // rank 0, stream 7 first
  EXPECT_EQ(m.streams[1].handle, 20);
  EXPECT_EQ(m.streams[2].rank, 1u);
  EXPECT_EQ(m.ranks[0].first_op, 0u);
  EXPECT_EQ(m.ranks[0].op_count, 3u);
  EXPECT_EQ(m.ranks[1].first_op, 3u);
  EXPECT_EQ(m.str(m.ops.name[0]), "early");
  EXPECT_EQ(m.str(m.ops.name[1]), "late");
  EXPECT_EQ(m.str(m.ops.name[2]), "other");
  EXPECT_EQ(m.str(m.ops.name[3]), "remote");
  // Calls sorted by start, launches follow their ops both ways.
  EXPECT_EQ(m.api_calls.start[0], us(1));
  EXPECT_EQ(m.launchOf(0), 0u);
  EXPECT_EQ(m.launchOf(1), 1u);
  EXPECT_EQ(m.launchOf(2), kNone);
  auto out = m.opsLaunchedBy(1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], 1u);
  EXPECT_EQ(m.rankOfOp(3), 1u);
  EXPECT_EQ(m.rankOfCall(0), 0u);
}

TEST(RunModelBuilder, IndexesTheOpsEachCallLaunchedInOpOrder) {
  RunSketch s;
  const Index r0 = s.rank(0);
  const Index a = s.stream(r0, 7), b = s.stream(r0, 9);
  const Index t0 = s.thread(r0, 100);
  // A graph launch enqueues ops on two streams; the synchronize launches none; the last call
  // launches one op, added before the graph's.
  const Index graph = s.call(t0, "cudaGraphLaunch", us(1), us(2));
  s.call(t0, "cudaDeviceSynchronize", us(3), us(9));
  const Index single = s.call(t0, "cudaLaunchKernel", us(10), us(11));
  s.kernel(a, "after", us(12), us(13), single);
  s.kernel(b, "graph second stream", us(2), us(5), graph);
  s.kernel(a, "graph first stream", us(2), us(4), graph);
  s.kernel(a, "graph second on a", us(4), us(6), graph);
  const RunModel m = s.build();

  auto named = [&](std::span<const Index> ops) {
    std::vector<std::string> out;
    for (const Index op : ops) out.emplace_back(m.str(m.ops.name[op]));
    return out;
  };
  // Ops are ordered by (stream, start): stream 7's three, then stream 9's.
  EXPECT_EQ(named(m.opsLaunchedBy(0)),
            (std::vector<std::string>{"graph first stream", "graph second on a", "graph second stream"}));
  EXPECT_TRUE(m.opsLaunchedBy(1).empty()) << "the synchronize launched nothing";
  EXPECT_EQ(named(m.opsLaunchedBy(2)), std::vector<std::string>{"after"});
  EXPECT_TRUE(m.opsLaunchedBy(3).empty()) << "a call the model does not have launched nothing";
  EXPECT_EQ(m.launched_ops.size(), 4u);
}

TEST(RunModelBuilder, RejectsDanglingReferences) {
  RunModelBuilder b;
  const Index r = b.addRank({});
  b.addStream(r, 0, 1, "s");
  b.addOp({.stream = 5, .kind = trace::OpKind::Kernel, .name = 0, .start = 0, .end = 1});
  auto m = std::move(b).finish();
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.message().find("op 0 refers to stream 5"), std::string::npos) << m.message();
}

TEST(RunModelBuilder, KeepsStoreIdsInThirtyTwoBitsAndRefusesLargerOnes) {
  auto build = [](std::int64_t op_id, std::int64_t call_id) {
    RunModelBuilder b;
    const Index r = b.addRank({});
    const Index t = b.addThread(r, 1, "main");
    b.addStream(r, 0, 1, "s");
    const Index call = b.addApiCall({.thread = t, .name = 0, .start = 0, .end = 1, .store_id = call_id});
    b.addOp({.stream = 0, .name = 0, .start = 2, .end = 3, .api_call = call, .store_id = op_id});
    b.addOp({.stream = 0, .name = 0, .start = 4, .end = 5});
    return std::move(b).finish();
  };
  auto m = build(StoreIdColumn::kMax, 0);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->ops.store_id[0], StoreIdColumn::kMax);
  EXPECT_EQ(m->ops.store_id[1], kUnknown) << "an op added without a store id";
  EXPECT_EQ(m->api_calls.store_id[0], 0);

  auto too_large = build(StoreIdColumn::kMax + 1, 7);
  ASSERT_FALSE(too_large.ok());
  EXPECT_EQ(too_large.message(), "op 0 has store id 4294967295, outside the 0 to 4294967294 a model keeps: a store's writer "
                                 "numbers its rows from 1, and no store holds that many, so the store is corrupt");
  auto negative = build(5, -2);
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.message().rfind("api call 0 has store id -2, outside", 0), 0u) << negative.message();
}

TEST(RunModelBuilder, MatchesCollectivesAcrossRanksBySequenceNumber) {
  RunSketch s;
  const Index r0 = s.rank(0), r1 = s.rank(1);
  const Index a = s.stream(r0, 1), b = s.stream(r1, 1);
  s.allReduce(a, 42, 0, 2, 0, us(0), us(10));
  s.allReduce(a, 42, 0, 2, 1, us(20), us(30));
  s.allReduce(b, 42, 1, 2, 1, us(22), us(30));
  s.allReduce(b, 42, 1, 2, 0, us(5), us(10));
  s.allReduce(b, 43, 0, 1, 0, us(40), us(41));  // a communicator of one
  RunModel m = s.build();
  ASSERT_EQ(m.matches.size(), 3u);
  for (Index k = 0; k < 2; ++k) {
    EXPECT_EQ(m.matches.comm_id[k], 42);
    EXPECT_EQ(m.matches.seq[k], k);
    EXPECT_TRUE(m.matches.complete(k));
    auto parts = m.matches.of(k);
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(m.rankOfOp(m.collectives.op[parts[0]]), 0u);
    EXPECT_EQ(m.rankOfOp(m.collectives.op[parts[1]]), 1u);
  }
  EXPECT_TRUE(m.matches.complete(2));
  // seq 1 on rank 1 starts at 22us.
  EXPECT_EQ(m.ops.start[m.collectives.op[m.matches.of(1)[1]]], us(22));
  // A Collective flow joins the two ranks of each two-rank call.
  std::size_t collective_flows = 0;
  for (Index e = 0; e < m.flows.size(); ++e) collective_flows += m.flows.kind(e) == FlowKind::Collective;
  EXPECT_EQ(collective_flows, 2u);
}

TEST(RunModelBuilder, PairsSendsWithReceivesInOrder) {
  RunSketch s;
  const Index r0 = s.rank(0), r1 = s.rank(1);
  const Index a = s.stream(r0, 1), b = s.stream(r1, 1);
  const Index send0 = s.collective(a, trace::CollType::Send, 9, 0, 2, 0, us(0), us(5), 10, trace::DataType::Float32, kNone, 1);
  const Index send1 = s.collective(a, trace::CollType::Send, 9, 0, 2, 1, us(10), us(15), 10, trace::DataType::Float32, kNone, 1);
  s.collective(b, trace::CollType::Recv, 9, 1, 2, 0, us(1), us(5), 10, trace::DataType::Float32, kNone, 0);
  s.collective(b, trace::CollType::Recv, 9, 1, 2, 1, us(11), us(15), 10, trace::DataType::Float32, kNone, 0);
  RunModel m = s.build();
  ASSERT_EQ(m.matches.size(), 2u);
  std::vector<std::pair<Index, Index>> pairs;
  for (Index e = 0; e < m.flows.size(); ++e)
    if (m.flows.kind(e) == FlowKind::SendRecv) pairs.emplace_back(m.flows.src(e).index(), m.flows.dst(e).index());
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(m.ops.start[pairs[0].first], us(0));
  EXPECT_EQ(m.ops.start[pairs[0].second], us(1));
  EXPECT_EQ(m.ops.start[pairs[1].first], us(10));
  EXPECT_EQ(m.ops.start[pairs[1].second], us(11));
  (void)send0, (void)send1;
}

TEST(RunModelBuilder, LinksStreamWaitToTheLatestRecordIssuedBeforeIt) {
  RunSketch s;
  const Index r = s.rank(0);
  const Index compute = s.stream(r, 1), comm = s.stream(r, 2);
  const Index t = s.thread(r, 1);
  const Index rec1 = s.call(t, "cudaEventRecord", us(0), us(1));
  const Index wait1 = s.call(t, "cudaStreamWaitEvent", us(2), us(3));
  const Index rec2 = s.call(t, "cudaEventRecord", us(4), us(5));
  const Index wait2 = s.call(t, "cudaStreamWaitEvent", us(6), us(7));
  s.op(compute, trace::OpKind::EventRecord, "record", us(10), us(10), rec1, kUnknown, 77);
  s.op(compute, trace::OpKind::EventRecord, "record", us(20), us(20), rec2, kUnknown, 77);
  s.op(comm, trace::OpKind::StreamWait, "wait", us(3), us(3), wait1, kUnknown, 77);
  s.op(comm, trace::OpKind::StreamWait, "wait", us(7), us(7), wait2, kUnknown, 77);
  RunModel m = s.build();
  std::vector<std::pair<std::int64_t, std::int64_t>> edges;  // record time -> wait time
  for (Index e = 0; e < m.flows.size(); ++e)
    if (m.flows.kind(e) == FlowKind::EventWait)
      edges.emplace_back(m.ops.start[m.flows.src(e).index()], m.ops.start[m.flows.dst(e).index()]);
  std::sort(edges.begin(), edges.end());
  ASSERT_EQ(edges.size(), 2u);
  EXPECT_EQ(edges[0], std::make_pair(us(10), us(3)));
  EXPECT_EQ(edges[1], std::make_pair(us(20), us(7)));
  EXPECT_EQ(m.eventOf(0), 77);
}

TEST(RunModelBuilder, ComputesRangeDepthFromNesting) {
  RunSketch s;
  const Index r = s.rank(0);
  const Index t = s.thread(r, 1);
  s.range(r, t, "inner", us(2), us(3));
  s.range(r, t, "ProfilerStep#1", us(0), us(10));
  s.range(r, t, "ProfilerStep#2", us(10), us(20));
  RunModel m = s.build();
  ASSERT_EQ(m.ranges.size(), 3u);
  EXPECT_EQ(m.str(m.ranges.name[0]), "ProfilerStep#1");
  EXPECT_EQ(m.ranges.depth[0], 0);
  EXPECT_EQ(m.ranges.depth[1], 1);
  EXPECT_EQ(m.ranges.depth[2], 0);
}

TEST(Classify, FollowsHtaKernelTypes) {
  EXPECT_EQ(classify(trace::OpKind::Kernel, "ncclKernel_AllReduce_RING_LL_Sum_float"), OpClass::Communication);
  EXPECT_EQ(classify(trace::OpKind::Kernel, "ncclDevKernel_AllGather_RING_LL"), OpClass::Communication);
  EXPECT_EQ(classify(trace::OpKind::Kernel, "void at::native::vectorized_elementwise_kernel<4>"), OpClass::Compute);
  EXPECT_EQ(classify(trace::OpKind::Memcpy, "Memcpy HtoD"), OpClass::Memory);
  EXPECT_EQ(classify(trace::OpKind::Memset, "Memset"), OpClass::Memory);
  EXPECT_EQ(classify(trace::OpKind::Collective, "AllReduce"), OpClass::Communication);
  EXPECT_EQ(classify(trace::OpKind::StreamWait, "wait"), OpClass::Marker);
}

}  // namespace
}  // namespace syncopate::analyzer
