#include "syncopate/analyzer/iterations.hpp"

#include <gtest/gtest.h>

#include "run_sketch.hpp"

namespace syncopate::analyzer {
namespace {

using testing::RunSketch;
using testing::us;

TEST(IterationMarker, DefaultAndNamedMarkers) {
  std::int64_t n = 0;
  EXPECT_TRUE(isIterationMarker("ProfilerStep#12", "", &n));
  EXPECT_EQ(n, 12);
  EXPECT_FALSE(isIterationMarker("ProfilerStep", "", &n));
  EXPECT_FALSE(isIterationMarker("ProfilerStepX#1", "", &n));
  EXPECT_TRUE(isIterationMarker("train_step", "train_step", &n));
  EXPECT_EQ(n, -1);
  EXPECT_TRUE(isIterationMarker("train_step#7", "train_step", &n));
  EXPECT_EQ(n, 7);
  EXPECT_TRUE(isIterationMarker("train_step epoch 1", "train_step", &n));
  EXPECT_FALSE(isIterationMarker("train_steps", "train_step", &n));
}

TEST(Iterations, NamedMarkerWithoutNumbersIsNumberedByPosition) {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index st = s.stream(rank, 1);
  const Index t = s.thread(rank, 1);
  for (int k = 0; k < 3; ++k) {
    s.range(rank, t, "train_step", us(100 * k), us(100 * k + 100));
    const Index c = s.call(t, "cudaLaunchKernel", us(100 * k + 1), us(100 * k + 2));
    s.kernel(st, "k", us(100 * k + 10), us(100 * k + 60), c);
  }
  const RunModel m = s.build();
  auto its = detectIterations(m, {.marker = "train_step"});
  ASSERT_TRUE(its.ok());
  ASSERT_EQ(its->per_rank[0].size(), 3u);
  EXPECT_EQ(its->per_rank[0][2].number, 2);
  EXPECT_EQ(its->per_rank[0][0].start, us(10));
  EXPECT_EQ(its->per_rank[0][0].end, us(110));
  EXPECT_EQ(its->per_rank[0][2].end, us(260));
  EXPECT_EQ(its->source, IterationSource::Markers);
}

TEST(Iterations, UnknownMarkerNameIsAnError) {
  RunSketch s;
  const Index rank = s.rank(0);
  s.kernel(s.stream(rank, 1), "k", 0, 10);
  const RunModel m = s.build();
  auto its = detectIterations(m, {.marker = "my_step"});
  ASSERT_FALSE(its.ok());
  EXPECT_NE(its.message().find("my_step"), std::string::npos);
}

TEST(Iterations, OpsLaunchedBetweenStepsBelongToNone) {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index st = s.stream(rank, 1);
  const Index t = s.thread(rank, 1);
  s.range(rank, t, "ProfilerStep#5", 0, us(10));
  s.range(rank, t, "ProfilerStep#6", us(20), us(30));
  s.kernel(st, "in5", us(1), us(2), s.call(t, "launch", us(1), us(1)));
  s.kernel(st, "between", us(15), us(16), s.call(t, "launch", us(15), us(15)));
  s.kernel(st, "in6", us(21), us(22), s.call(t, "launch", us(21), us(21)));
  const RunModel m = s.build();
  auto its = detectIterations(m);
  ASSERT_TRUE(its.ok());
  ASSERT_EQ(its->per_rank[0].size(), 2u);
  EXPECT_EQ(its->per_rank[0][0].op_count, 1u);
  EXPECT_EQ(its->per_rank[0][0].end, us(21));  // steps 5 and 6 are adjacent numbers
  EXPECT_EQ(its->per_rank[0][1].op_count, 1u);
  EXPECT_EQ(its->numbers, (std::vector<std::int64_t>{5, 6}));
}

TEST(Iterations, StepCutByTheEndOfTheRecordingIsLeftOut) {
  RunSketch s;
  RankInfo info;
  info.rank = 0;
  info.recording_end_ns = us(300);
  const Index rank = s.builder().addRank(info);
  const Index st = s.stream(rank, 1);
  const Index t = s.thread(rank, 1);
  for (int k = 0; k < 3; ++k) {
    s.range(rank, t, "ProfilerStep#" + std::to_string(k), us(100 * k), us(100 * k + 100));
    s.kernel(st, "k", us(100 * k + 10), us(100 * k + 60), s.call(t, "launch", us(100 * k + 1), us(100 * k + 2)));
  }
  const RunModel m = s.build();
  auto its = detectIterations(m);
  ASSERT_TRUE(its.ok());
  EXPECT_EQ(its->per_rank[0].size(), 2u);
  ASSERT_EQ(its->notes.size(), 1u);
  EXPECT_NE(its->notes[0].find("step 2"), std::string::npos);
}

// No markers: C D, then four repetitions of A B C D with a 12us gap before each A.
TEST(Iterations, DetectedFromTheRepeatingOpPattern) {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index st = s.stream(rank, 1);
  s.kernel(st, "C", 0, us(1));
  s.kernel(st, "D", us(1), us(2));
  for (int r = 0; r < 4; ++r) {
    const std::int64_t base = us(10 + 20 * r);
    s.kernel(st, "A", base, base + us(2));
    s.kernel(st, "B", base + us(2), base + us(4));
    s.kernel(st, "C", base + us(4), base + us(6));
    s.kernel(st, "D", base + us(6), base + us(8));
  }
  const RunModel m = s.build();
  auto its = detectIterations(m);
  ASSERT_TRUE(its.ok());
  EXPECT_EQ(its->source, IterationSource::Pattern);
  EXPECT_EQ(its->pattern_length, 4);
  const auto& it = its->per_rank[0];
  ASSERT_EQ(it.size(), 4u);
  EXPECT_EQ(it[0].start, us(10));
  EXPECT_EQ(it[0].end, us(30));
  EXPECT_EQ(it[3].start, us(70));
  EXPECT_EQ(it[3].end, us(78));
  EXPECT_EQ(it[3].number, 3);
}

TEST(Iterations, PatternToleratesAnOccasionalExtraOp) {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index st = s.stream(rank, 1);
  std::int64_t t = 0;
  for (int r = 0; r < 12; ++r) {
    t += us(10);  // idle before each iteration
    for (const char* name : {"load", "fwd1", "fwd2", "bwd2", "bwd1", "opt"}) {
      s.kernel(st, name, t, t + us(1));
      t += us(1);
    }
    if (r == 5) s.kernel(st, "checkpoint", t, t + us(1)), t += us(1);
  }
  const RunModel m = s.build();
  auto its = detectIterations(m);
  ASSERT_TRUE(its.ok());
  EXPECT_EQ(its->source, IterationSource::Pattern);
  EXPECT_EQ(its->pattern_length, 6);
  ASSERT_GE(its->per_rank[0].size(), 10u);
  EXPECT_EQ(its->per_rank[0][0].start, us(10));
}

// Rank 1's recording starts one iteration later than rank 0's: its first detected iteration
// holds the same all-reduce as rank 0's second, so both are numbered 1.
TEST(Iterations, PatternNumbersAgreeAcrossRanksThroughCollectives) {
  RunSketch s;
  const Index r0 = s.rank(0), r1 = s.rank(1);
  const Index st0 = s.stream(r0, 1), st1 = s.stream(r1, 1);
  for (int k = 0; k < 4; ++k) {
    const std::int64_t base = us(100 * k);
    for (const auto& [rank, st] : {std::pair{0, st0}, std::pair{1, st1}}) {
      if (rank == 1 && k == 0) continue;
      s.kernel(st, "fwd", base + us(20), base + us(40));
      s.kernel(st, "bwd", base + us(40), base + us(70));
      s.allReduce(st, 9, rank, 2, k, base + us(70), base + us(80));
    }
  }
  const RunModel m = s.build();
  auto its = detectIterations(m);
  ASSERT_TRUE(its.ok());
  ASSERT_EQ(its->source, IterationSource::Pattern);
  ASSERT_EQ(its->per_rank[0].size(), 4u);
  ASSERT_EQ(its->per_rank[1].size(), 3u);
  EXPECT_EQ(its->per_rank[0][1].number, 1);
  EXPECT_EQ(its->per_rank[1][0].number, 1);
  EXPECT_EQ(its->per_rank[1][0].start, us(120));
  EXPECT_EQ(its->numbers, (std::vector<std::int64_t>{0, 1, 2, 3}));
}

TEST(Iterations, NoMarkersAndNoPatternIsOneWholeRunIteration) {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index st = s.stream(rank, 1);
  s.kernel(st, "a", 0, us(5));
  s.kernel(st, "b", us(10), us(20));
  s.kernel(st, "c", us(30), us(31));
  const RunModel m = s.build();
  auto its = detectIterations(m);
  ASSERT_TRUE(its.ok());
  EXPECT_EQ(its->source, IterationSource::WholeRun);
  ASSERT_EQ(its->per_rank[0].size(), 1u);
  EXPECT_EQ(its->per_rank[0][0].start, 0);
  EXPECT_EQ(its->per_rank[0][0].end, us(31));
}

}  // namespace
}  // namespace syncopate::analyzer
