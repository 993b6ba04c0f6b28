#include "syncopate/analyzer/critical_path.hpp"

#include <gtest/gtest.h>

#include "scenarios.hpp"
#include "syncopate/analyzer/analysis.hpp"

namespace syncopate::analyzer {
namespace {

using testing::RunSketch;
using testing::us;

void expectContiguous(const CriticalPath& p) {
  ASSERT_FALSE(p.segments.empty());
  EXPECT_EQ(p.segments.front().start, p.start);
  EXPECT_EQ(p.segments.back().end, p.end);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < p.segments.size(); ++i) {
    if (i > 0) {
      EXPECT_EQ(p.segments[i].start, p.segments[i - 1].end) << "segment " << i;
    }
    total += p.segments[i].end - p.segments[i].start;
  }
  EXPECT_EQ(total, p.length());
  std::int64_t attributed = 0;
  for (auto v : p.attribution) attributed += v;
  EXPECT_EQ(attributed, p.length());
}

std::vector<CriticalPath> pathsOf(const RunModel& m) {
  auto a = analyze(m);
  EXPECT_TRUE(a.ok());
  return a->critical_paths;
}

TEST(CriticalPath, StragglerWaitIsTheLateRanksLead) {
  const RunModel m = testing::straggler();
  const auto paths = pathsOf(m);
  ASSERT_EQ(paths.size(), 1u);
  const CriticalPath& p = paths[0];
  expectContiguous(p);
  EXPECT_EQ(p.start, us(5));
  EXPECT_EQ(p.end, us(85));
  // [5,45] rank 1 computes, [45,60] rank 1 still computes while rank 0 waits,
  // [60,75] the all-reduce, [75,85] the optimizer.
  ASSERT_EQ(p.segments.size(), 4u);
  EXPECT_EQ(p.segments[0].category, PathCategory::Compute);
  EXPECT_EQ(p.segments[0].rank, 1u);
  EXPECT_EQ(p.segments[0].end, us(45));
  EXPECT_EQ(p.segments[1].category, PathCategory::StragglerWait);
  EXPECT_EQ(p.segments[1].straggler, 1u);
  EXPECT_EQ(p.segments[1].start, us(45));
  EXPECT_EQ(p.segments[1].end, us(60));
  EXPECT_EQ(p.segments[2].category, PathCategory::Communication);
  EXPECT_EQ(p.segments[2].start, us(60));
  EXPECT_EQ(p.segments[3].category, PathCategory::Compute);
  EXPECT_EQ(p.attributed(PathCategory::Compute), us(50));
  EXPECT_EQ(p.attributed(PathCategory::StragglerWait), us(15));
  EXPECT_EQ(p.attributed(PathCategory::Communication), us(15));
  EXPECT_EQ(p.attributed(PathCategory::Host), 0);
}

TEST(CriticalPath, HostBoundIterationIsLaunchAndHostTime) {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index st = s.stream(rank, 7);
  const Index t = s.thread(rank, 1);
  s.range(rank, t, "ProfilerStep#1", 0, us(50));
  for (int i = 0; i < 5; ++i) {
    const Index c = s.call(t, "cudaLaunchKernel", us(10 * i), us(10 * i + 2));
    s.kernel(st, "gemm", us(10 * i + 3), us(10 * i + 7), c);
  }
  const RunModel m = s.build();
  const auto paths = pathsOf(m);
  ASSERT_EQ(paths.size(), 1u);
  const CriticalPath& p = paths[0];
  expectContiguous(p);
  EXPECT_EQ(p.length(), us(44));
  // The last kernel (4us) waited 3us for its launch, which waited for the host's chain of calls.
  EXPECT_EQ(p.attributed(PathCategory::Compute), us(4));
  EXPECT_EQ(p.attributed(PathCategory::Launch), us(3));
  EXPECT_EQ(p.attributed(PathCategory::Host), us(37));
  EXPECT_EQ(p.segments.back().node, NodeRef::op(4));
}

TEST(CriticalPath, AllOverlappedIterationIsPureCompute) {
  RunSketch s;
  for (int r = 0; r < 2; ++r) {
    const Index rank = s.rank(r);
    const Index compute = s.stream(rank, 7), comm = s.stream(rank, 20);
    const Index t = s.thread(rank, 100 + r);
    s.range(rank, t, "ProfilerStep#0", 0, us(100));
    const Index c1 = s.call(t, "cudaLaunchKernel", us(1), us(2));
    const Index c2 = s.call(t, "cudaLaunchKernel", us(2), us(3));
    const Index c3 = s.call(t, "ncclAllReduce", us(3), us(4));
    s.kernel(compute, "fwd", us(10), us(40), c1);
    s.kernel(compute, "bwd", us(40), us(80), c2);
    s.allReduce(comm, 1, r, 2, 0, us(50), us(70), 1024, c3);
  }
  const auto paths = pathsOf(s.build());
  ASSERT_EQ(paths.size(), 1u);
  expectContiguous(paths[0]);
  EXPECT_EQ(paths[0].length(), us(70));
  EXPECT_EQ(paths[0].attributed(PathCategory::Compute), us(70));
  EXPECT_EQ(paths[0].attributed(PathCategory::Communication), 0);
}

TEST(CriticalPath, HostSyncReturnsWhenTheAwaitedKernelEnds) {
  const auto paths = pathsOf(testing::hostSync());
  ASSERT_EQ(paths.size(), 1u);
  const CriticalPath& p = paths[0];
  expectContiguous(p);
  EXPECT_EQ(p.start, us(5));
  EXPECT_EQ(p.end, us(60));
  EXPECT_EQ(p.attributed(PathCategory::Compute), us(50));  // k0 45 + k1 5
  EXPECT_EQ(p.attributed(PathCategory::Sync), us(1));      // [50,51]
  EXPECT_EQ(p.attributed(PathCategory::Host), us(1));      // [51,52]
  EXPECT_EQ(p.attributed(PathCategory::Launch), us(3));    // [52,55]
}

// A sync waits for the work issued before it, not for what another thread issues while it
// blocks: thread 1 launches k0 (stream 7, [5,40]) and blocks in cudaDeviceSynchronize [2,51];
// thread 2 launches k1 at 10 (stream 8, [12,50]), during the sync; thread 1 then launches k2
// ([55,60]). The sync is joined to k0, the last op issued before it: sync time [40,51], and k1,
// though it ended later, is off the path.
TEST(CriticalPath, SyncWaitsForWorkIssuedBeforeIt) {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index a = s.stream(rank, 7), b = s.stream(rank, 8);
  const Index t1 = s.thread(rank, 1), t2 = s.thread(rank, 2);
  s.range(rank, t1, "ProfilerStep#0", 0, us(100));
  const Index c0 = s.call(t1, "cudaLaunchKernel", us(0), us(1));
  const Index c1 = s.call(t1, "cudaDeviceSynchronize", us(2), us(51));
  const Index c2 = s.call(t1, "cudaLaunchKernel", us(52), us(53));
  const Index c3 = s.call(t2, "cudaLaunchKernel", us(10), us(11));
  s.kernel(a, "k0", us(5), us(40), c0);
  s.hostSync(rank, c1, trace::SyncKind::Device, kNone, us(2), us(51));
  s.kernel(b, "k1", us(12), us(50), c3);
  s.kernel(a, "k2", us(55), us(60), c2);
  const auto paths = pathsOf(s.build());
  ASSERT_EQ(paths.size(), 1u);
  const CriticalPath& p = paths[0];
  expectContiguous(p);
  EXPECT_EQ(p.start, us(5));
  EXPECT_EQ(p.attributed(PathCategory::Compute), us(40));  // k0 35 + k2 5
  EXPECT_EQ(p.attributed(PathCategory::Sync), us(11));     // [40,51]
  EXPECT_EQ(p.attributed(PathCategory::Host), us(1));      // [51,52]
  EXPECT_EQ(p.attributed(PathCategory::Launch), us(3));    // [52,55]
}

TEST(CriticalPath, ToAnyOpFromAnyStart) {
  const RunModel m = testing::hostSync();
  // The path to k1 from 20us: k0's part before 20us is cut.
  const Index k1 = 1;
  ASSERT_EQ(m.str(m.ops.name[k1]), "k1");
  const CriticalPath p = criticalPathTo(m, k1, us(20));
  expectContiguous(p);
  EXPECT_EQ(p.start, us(20));
  EXPECT_EQ(p.end, us(60));
  EXPECT_EQ(p.attributed(PathCategory::Compute), us(35));  // k0 [20,50] + k1 [55,60]
  EXPECT_EQ(p.attributed(PathCategory::Sync), us(1));
}

TEST(CriticalPath, StreamWaitFollowsTheEventRecord) {
  const auto paths = pathsOf(testing::eventWait());
  ASSERT_EQ(paths.size(), 1u);
  const CriticalPath& p = paths[0];
  expectContiguous(p);
  EXPECT_EQ(p.length(), us(50));
  EXPECT_EQ(p.attributed(PathCategory::Compute), us(50));  // k1 30 + after_wait 20
  EXPECT_EQ(p.attributed(PathCategory::Idle), 0);
  ASSERT_EQ(p.segments.size(), 2u);
  EXPECT_EQ(p.segments[0].end, us(35));
}

// Walked in legs, as the processes of a distributed analysis walk it, each holding some ranks:
// where the last arrival at a collective is a rank the walker does not hold, the leg ends there
// with what the next one needs (the rank, the op's id in its store, the time, the open straggler
// window), and the legs put together are the whole walk, straggler time included.
TEST(CriticalPath, LegsHandedOverAtACollectiveMakeTheWholePath) {
  const RunModel m = testing::straggler();
  const auto whole = pathsOf(m);
  ASSERT_EQ(whole.size(), 1u);
  const CriticalPath& p = whole[0];
  const PathWalker walker(m);
  const auto holding = [&m](Index rank) -> ArrivalOf {
    return [&m, rank](Index op, CollectiveArrival& out) {
      if (!matchedArrival(m, op, out)) return false;
      if (out.last_rank != rank) out.last_op = kNone;  // another process's
      return true;
    };
  };
  // The sink, the optimizer step of rank 0 that ended last, walked by rank 0's process.
  ASSERT_EQ(p.segments.back().node.kind(), NodeRef::Kind::Op);
  const Index sink = p.segments.back().node.index();
  ASSERT_EQ(m.rankOfOp(sink), 0u);
  PathLegStart first;
  first.op = sink;
  first.time = p.end;
  first.floor = p.start;
  const PathLeg rank0 = walker.walk(first, holding(0));
  ASSERT_TRUE(rank0.handed_off);
  EXPECT_EQ(rank0.next.last_rank, 1u);
  EXPECT_EQ(rank0.next.last_op, kNone);
  EXPECT_EQ(rank0.next_time, us(60));
  EXPECT_EQ(rank0.straggler, 1u);  // rank 0 waited from 45 us for rank 1's arrival at 60 us
  EXPECT_EQ(rank0.straggler_floor, us(45));
  // Rank 1's process finds the collective op by its id in rank 1's store.
  Index handed = kNone;
  for (Index c = 0; c < m.collectives.size(); ++c) {
    const Index op = m.collectives.op[c];
    if (m.rankOfOp(op) == 1 && m.ops.store_id[op] == rank0.next.last_store_id) handed = op;
  }
  ASSERT_NE(handed, kNone);
  const PathLeg rank1 = walker.walk({handed, rank0.next_time, true, p.start, rank0.straggler, rank0.straggler_floor},
                                    holding(1));
  EXPECT_FALSE(rank1.handed_off);
  std::vector<PathSegment> stitched = rank1.segments;
  stitched.insert(stitched.end(), rank0.segments.begin(), rank0.segments.end());
  ASSERT_EQ(stitched.size(), p.segments.size());
  for (std::size_t i = 0; i < stitched.size(); ++i) {
    EXPECT_EQ(stitched[i].node, p.segments[i].node) << "segment " << i;
    EXPECT_EQ(stitched[i].rank, p.segments[i].rank) << "segment " << i;
    EXPECT_EQ(stitched[i].start, p.segments[i].start) << "segment " << i;
    EXPECT_EQ(stitched[i].end, p.segments[i].end) << "segment " << i;
    EXPECT_EQ(stitched[i].category, p.segments[i].category) << "segment " << i;
    EXPECT_EQ(stitched[i].straggler, p.segments[i].straggler) << "segment " << i;
    EXPECT_EQ(stitched[i].waiting, p.segments[i].waiting) << "segment " << i;
  }
}

}  // namespace
}  // namespace syncopate::analyzer
