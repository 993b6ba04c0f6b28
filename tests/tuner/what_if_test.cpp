// The what-if model on recorded runs of the synthetic trainer, whose iteration times under
// each schedule can be worked out by hand.
#include <gtest/gtest.h>

#include "synthetic_trainer.hpp"
#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace syncopate::tuner {
namespace {

using testing::SyntheticTrainer;

struct Modelled {
  analyzer::Analysis analysis;
  WhatIfModel model;
};

Modelled modelOf(const SyntheticTrainer& t, const ModelOptions& options = {}) {
  testing::SyntheticRun run = testing::makeRun(t);
  auto analysis = analyzer::analyze(run.model);
  EXPECT_TRUE(analysis.ok());
  auto model = WhatIfModel::build(run.model, *analysis, run.pointers, options);
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.message());
  return {std::move(analysis).value(), std::move(model).value()};
}

// Per-layer buckets issued last layer first (the order backward produces them).
ScheduleRules perLayerReverse(const WhatIfModel& m, bool per_bucket_waits = true) {
  const RecordedRank& rank = m.calls().ranks[0];
  // The group: the all-reduces of one iteration.
  std::vector<CollectiveArgs> members;
  for (const RecordedCall& rc : rank.calls)
    if (rc.iteration == m.firstIteration() && rc.call.kind == CallKind::Collective) members.push_back(rc.call.collective);
  GroupPlan g;
  GroupSignature sig;
  for (const CollectiveArgs& a : members) sig.add(a);
  g.signature = sig.value();
  g.members = static_cast<std::uint32_t>(members.size());
  for (std::uint32_t i = 0; i < g.members; ++i) {
    g.bucket_first.push_back(i);
    g.parts.push_back(1);
  }
  for (std::uint32_t i = g.members; i-- > 0;) g.order.push_back({static_cast<std::uint16_t>(i), 0});
  ScheduleRules rules;
  rules.per_bucket_waits = per_bucket_waits;
  rules.groups.push_back(g);
  return rules;
}

SyntheticTrainer baseTrainer() {
  SyntheticTrainer t;
  t.ranks = 4;
  t.layers = 4;
  t.iterations = 7;
  t.forward_ns = 100'000;
  t.backward_ns = 200'000;
  t.update_ns = 20'000;
  t.memset_ns = 5'000;
  t.layer_floats = 1 << 20;  // 4 MiB per layer
  t.latency_ns = 10'000;
  // 150 us per all-reduce on 4 ranks: 6 * 10 us latency + 1.5 * 4 MiB * b = 150 us.
  t.ns_per_byte = 90'000.0 / (1.5 * 4.0 * (1 << 20));
  return t;
}

// The naive runs show no overlap to measure interference from; these tests work without any.
ModelOptions noInterference() {
  ModelOptions o;
  o.compute_slowdown = 0;
  o.communication_slowdown = 0;
  return o;
}

double naiveStep(const SyntheticTrainer& t) {
  return t.layers * (t.forward_ns + t.backward_ns + t.allReduceNs() + t.update_ns) + t.memset_ns;
}

TEST(WhatIf, ReplayOfTheRecordedScheduleReproducesTheMeasuredTime) {
  const SyntheticTrainer t = baseTrainer();
  const Modelled m = modelOf(t);
  EXPECT_NEAR(m.model.measuredIterationNs(), naiveStep(t), 2.0);
  const Prediction replay = m.model.predict(nullptr);
  ASSERT_TRUE(replay.ok) << replay.error;
  EXPECT_NEAR(replay.iteration_ns, m.model.measuredIterationNs(), 2.0);
  // Iterations 0..6 recorded: the window is the latest six steady ones, 1..6, predicting 2..5.
  EXPECT_EQ(m.model.predictedIterations(), (std::vector<std::int64_t>{2, 3, 4, 5}));
}

TEST(WhatIf, ReplayOfAShardedRunReproducesTheMeasuredTime) {
  SyntheticTrainer t = baseTrainer();
  t.mode = SyntheticTrainer::Mode::Zero1;
  const Modelled m = modelOf(t);
  // Everything on one stream: per layer its forward, backward, reduce-scatter, update and
  // all-gather (75 us each of those two: half an all-reduce's ring).
  const double step = t.layers * (t.forward_ns + t.backward_ns + 2 * t.reduceScatterNs() + t.update_ns);
  EXPECT_NEAR(m.model.measuredIterationNs(), step, 2.0);
  const Prediction replay = m.model.predict(nullptr);
  ASSERT_TRUE(replay.ok) << replay.error;
  EXPECT_NEAR(replay.iteration_ns, m.model.measuredIterationNs(), 2.0);
  // The reduce-scatters and all-gathers (n - 1 ring steps, bus factor (n - 1) / n) and the
  // broadcast give the communicator's links back.
  ASSERT_EQ(m.model.communication().fits.size(), 1u);
  const CommFit& f = m.model.communication().fits[0];
  EXPECT_NEAR(f.latency_ns, t.latency_ns, 1.0);
  EXPECT_NEAR(f.ns_per_byte, t.ns_per_byte, 1e-6);
  EXPECT_NEAR(m.model.bounds().communication_ns, 2 * t.layers * t.reduceScatterNs(), 2.0);
}

TEST(WhatIf, CollectivesAreMatchedAcrossRanksBySequenceNumberWhateverAStoreLost) {
  // Rank 1's store lost the set-up broadcast: counted call by call, each of its all-reduces
  // would pair with the other ranks' next one (another layer's, finishing at another time).
  SyntheticTrainer t = baseTrainer();
  t.lost_broadcast_rank = 1;
  const Modelled m = modelOf(t, noInterference());
  const Prediction replay = m.model.predict(nullptr);
  ASSERT_TRUE(replay.ok) << replay.error;
  EXPECT_NEAR(replay.iteration_ns, naiveStep(t), 2.0);
  const ScheduleRules rules = perLayerReverse(m.model);
  const Prediction overlapped = m.model.predict(&rules);
  ASSERT_TRUE(overlapped.ok) << overlapped.error;
  const Modelled whole = modelOf(baseTrainer(), noInterference());
  const ScheduleRules whole_rules = perLayerReverse(whole.model);
  EXPECT_NEAR(overlapped.iteration_ns, whole.model.predict(&whole_rules).iteration_ns, 2.0);
}

TEST(WhatIf, CommunicationFitRecoversLatencyAndBandwidth) {
  const SyntheticTrainer t = baseTrainer();
  const Modelled m = modelOf(t);
  ASSERT_EQ(m.model.communication().fits.size(), 1u);
  const CommFit& f = m.model.communication().fits[0];
  EXPECT_TRUE(f.latency_identified);  // a broadcast and all-reduces: two shapes of call
  EXPECT_NEAR(f.latency_ns, t.latency_ns, 1.0);
  EXPECT_NEAR(f.ns_per_byte, t.ns_per_byte, 1e-6);
  EXPECT_LT(f.rms_relative_error, 1e-4);
}

TEST(WhatIf, InterferenceIsNotMeasurableWithoutOverlapAndTheOverrideIsUsed) {
  const SyntheticTrainer t = baseTrainer();
  ModelOptions options;
  options.prior_compute_slowdown = 0.3;
  const Modelled m = modelOf(t, options);
  EXPECT_FALSE(m.model.interference().compute.measured);
  EXPECT_DOUBLE_EQ(m.model.interference().compute.slowdown, 0.3);
}

TEST(WhatIf, InterferenceIsMeasuredFromAnOverlappedRun) {
  SyntheticTrainer t = baseTrainer();
  t.mode = SyntheticTrainer::Mode::Overlap;
  t.compute_slowdown = 0.10;
  t.communication_slowdown = 0.20;
  const Modelled m = modelOf(t);
  ASSERT_TRUE(m.model.interference().compute.measured);
  ASSERT_TRUE(m.model.interference().communication.measured);
  EXPECT_NEAR(m.model.interference().compute.slowdown, 0.10, 1e-3);
  EXPECT_NEAR(m.model.interference().communication.slowdown, 0.20, 1e-3);
  // And the replay of that overlapped schedule, interference included, is exact too.
  const Prediction replay = m.model.predict(nullptr);
  ASSERT_TRUE(replay.ok) << replay.error;
  EXPECT_NEAR(replay.iteration_ns / m.model.measuredIterationNs(), 1.0, 1e-4);
}

TEST(WhatIf, OverlappedScheduleHidesAllButTheLastBucket) {
  // The all-reduce (150 us) is shorter than a layer's backward (200 us): each bucket is done
  // before the next is ready, so only the last one (layer 0) is exposed.
  const SyntheticTrainer t = baseTrainer();
  const Modelled m = modelOf(t, noInterference());
  const ScheduleRules rules = perLayerReverse(m.model);
  const Prediction p = m.model.predict(&rules);
  ASSERT_TRUE(p.ok) << p.error;
  const double expected = t.layers * (t.forward_ns + t.backward_ns + t.update_ns) + t.memset_ns + t.allReduceNs();
  EXPECT_NEAR(p.iteration_ns, expected, 2.0);
  EXPECT_GT(p.stats.planned_groups, 0u);
  EXPECT_EQ(p.stats.unplanned_groups, 0u);
  EXPECT_GT(p.stats.producer_waits, 0u);
}

TEST(WhatIf, CommunicationBoundScheduleIsTheChainOfAllReduces) {
  SyntheticTrainer t = baseTrainer();
  t.backward_ns = 100'000;  // now each all-reduce (150 us) outlasts a layer's backward
  const Modelled m = modelOf(t, noInterference());
  const ScheduleRules rules = perLayerReverse(m.model);
  const Prediction p = m.model.predict(&rules);
  ASSERT_TRUE(p.ok) << p.error;
  const double expected =
      t.layers * (t.forward_ns + t.update_ns) + t.memset_ns + t.backward_ns + t.layers * t.allReduceNs();
  EXPECT_NEAR(p.iteration_ns, expected, 2.0);
}

TEST(WhatIf, StragglerSetsEveryRanksTime) {
  SyntheticTrainer t = baseTrainer();
  t.rank_backward_scale = {1.0, 1.0, 1.5, 1.0};
  const Modelled m = modelOf(t);
  const double expected = t.layers * (t.forward_ns + 1.5 * t.backward_ns + t.allReduceNs() + t.update_ns) + t.memset_ns;
  EXPECT_NEAR(m.model.measuredIterationNs(), expected, 2.0);
  const Prediction replay = m.model.predict(nullptr);
  ASSERT_TRUE(replay.ok) << replay.error;
  EXPECT_NEAR(replay.iteration_ns, expected, 2.0);
}

TEST(WhatIf, DelayedModeHidesCommunicationBehindTheNextStep) {
  const SyntheticTrainer t = baseTrainer();
  const Modelled m = modelOf(t, noInterference());
  const ScheduleRules rules = perLayerReverse(m.model);
  const Prediction p = m.model.predict(&rules, /*delayed=*/true);
  ASSERT_TRUE(p.ok) << p.error;
  const double compute = t.layers * (t.forward_ns + t.backward_ns + t.update_ns) + t.memset_ns;
  EXPECT_NEAR(p.iteration_ns, compute, 2.0);
}

TEST(WhatIf, GroupWideWaitsExposeTheWholeTail) {
  SyntheticTrainer t = baseTrainer();
  t.backward_ns = 100'000;
  const Modelled m = modelOf(t, noInterference());
  // Per-bucket waits or not, the first update needs layer 0, the last bucket: same time here.
  const ScheduleRules a = perLayerReverse(m.model, true), b = perLayerReverse(m.model, false);
  EXPECT_NEAR(m.model.predict(&a).iteration_ns, m.model.predict(&b).iteration_ns, 2.0);
}

TEST(WhatIf, BoundsAreComputeAndCommunicationAlone) {
  const SyntheticTrainer t = baseTrainer();
  const Modelled m = modelOf(t);
  EXPECT_NEAR(m.model.bounds().compute_ns, t.layers * (t.forward_ns + t.backward_ns + t.update_ns) + t.memset_ns, 2.0);
  EXPECT_NEAR(m.model.bounds().communication_ns, t.layers * t.allReduceNs(), 2.0);
  EXPECT_DOUBLE_EQ(m.model.bounds().ideal_ns, m.model.bounds().compute_ns);
}

TEST(WhatIf, TooFewIterationsIsAClearError) {
  SyntheticTrainer t = baseTrainer();
  t.iterations = 3;
  testing::SyntheticRun run = testing::makeRun(t);
  auto analysis = analyzer::analyze(run.model);
  ASSERT_TRUE(analysis.ok());
  auto model = WhatIfModel::build(run.model, *analysis, run.pointers);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.message().find("record more iterations"), std::string::npos);
}

TEST(WhatIf, RunWithoutBufferAddressesIsReplayedButNoScheduleIsPredicted) {
  const SyntheticTrainer t = baseTrainer();
  testing::SyntheticRun run = testing::makeRun(t);
  auto analysis = analyzer::analyze(run.model);
  ASSERT_TRUE(analysis.ok());
  auto model = WhatIfModel::build(run.model, *analysis, OpPointers(run.model.ops.size()), noInterference());
  ASSERT_TRUE(model.ok()) << model.message();
  EXPECT_FALSE(model->calls().buffersKnown());
  // Every measured iteration is predicted, the first and the last included.
  EXPECT_EQ(model->predictedIterations().size(), static_cast<std::size_t>(t.iterations));
  const Prediction replay = model->predict(nullptr);
  ASSERT_TRUE(replay.ok) << replay.error;
  for (std::size_t i = 0; i < replay.per_iteration_ns.size(); ++i)
    EXPECT_NEAR(replay.per_iteration_ns[i], model->measuredPerIteration()[i], 2.0) << "iteration " << i;
  const ScheduleRules rules = perLayerReverse(*model);
  const Prediction schedule = model->predict(&rules);
  EXPECT_FALSE(schedule.ok);
  EXPECT_NE(schedule.error.find("buffer addresses"), std::string::npos);
}

}  // namespace
}  // namespace syncopate::tuner
