// A sharded optimizer found in the synthetic trainer's ZeRO-1 run, and its frameworks' overlap
// settings predicted (sharded_overlap.hpp), against step times worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "synthetic_trainer.hpp"
#include "syncopate/tuner/sharded_overlap.hpp"
#include "syncopate/tuner/tune.hpp"

namespace syncopate::tuner {
namespace {

using testing::SyntheticTrainer;

// 4 ranks, 4 layers of 4 MiB: forward 100 us a layer, backward 200, the shard's update 20, each
// layer's reduce-scatter and all-gather 75 us (3 ring steps of 10 us, 45 us of bytes).
SyntheticTrainer zeroOneTrainer() {
  SyntheticTrainer t;
  t.mode = SyntheticTrainer::Mode::Zero1;
  t.forward_ns = 100'000;
  t.backward_ns = 200'000;
  t.update_ns = 20'000;
  t.layer_floats = 1 << 20;
  t.latency_ns = 10'000;
  t.ns_per_byte = 90'000.0 / (1.5 * 4.0 * (1 << 20));
  return t;
}

double shardedPredictionNs(const WhatIfModel& model, const std::vector<RecordedGroup>& groups,
                           const ShardedOptimizerRun& run, bool grad_reduce, bool param_gather) {
  const ScheduleRules rules = shardedOverlapRules(groups, run, grad_reduce, param_gather);
  const Prediction p = model.predict(&rules);
  EXPECT_TRUE(p.ok) << p.error;
  return p.iteration_ns;
}

TEST(ShardedOverlap, TheOptimizersCollectivesAreFoundInLine) {
  const SyntheticTrainer t = zeroOneTrainer();
  ASSERT_NEAR(t.reduceScatterNs(), 75'000, 1.0);
  const testing::ModelledRun m = testing::modelRun(t);
  auto groups = recordedGroups(m.model);
  ASSERT_TRUE(groups.ok()) << groups.message();
  const ShardedOptimizerRun run = findShardedOptimizer(m.model);
  ASSERT_TRUE(run.found) << run.why_not;
  EXPECT_EQ(run.reduce_scatters, 4u);
  EXPECT_EQ(run.all_gathers, 4u);
  // The communicator's id, by which every rank's calls are rewritten (its index is rank 0's).
  const auto& calls = m.model.calls().ranks[0].calls;
  const auto reduce_scatter = std::find_if(calls.begin(), calls.end(), [](const RecordedCall& rc) {
    return rc.call.kind == CallKind::Collective && rc.call.collective.type == trace::CollType::ReduceScatter;
  });
  ASSERT_NE(reduce_scatter, calls.end());
  EXPECT_EQ(run.comm, reduce_scatter->call.collective.comm);
  EXPECT_EQ(run.comm_index, reduce_scatter->call.collective.comm_index);
  // In place, a reduce-scatter sends the whole bucket and an all-gather receives it.
  EXPECT_EQ(run.gradient_bytes, 4u * (4u << 20));
  EXPECT_EQ(run.parameter_bytes, 4u * (4u << 20));
  EXPECT_EQ(run.reduce_placement, Placement::InLine);
  EXPECT_EQ(run.gather_placement, Placement::InLine);
}

TEST(ShardedOverlap, EachSettingAndBothArePredictedAsWorkedOut) {
  const testing::ModelledRun m = testing::modelRun(zeroOneTrainer());
  auto groups = recordedGroups(m.model);
  ASSERT_TRUE(groups.ok()) << groups.message();
  const ShardedOptimizerRun run = findShardedOptimizer(m.model);
  ASSERT_TRUE(run.found) << run.why_not;
  // In line, all on one stream: forward 400, backward 800, reduce-scatters 300, updates 80,
  // all-gathers 300 us.
  EXPECT_NEAR(shardedPredictionNs(m.model, *groups, run, false, false), 1'880'000, 2.0);
  // Reduce-scatters overlapping backward: each starts as its layer's backward ends and runs
  // under the next; the last (layer 0's) ends 75 us after backward, and its update, the last,
  // waits for it: 400 + 800 + 75 + 20, then the all-gathers in line, 300.
  EXPECT_NEAR(shardedPredictionNs(m.model, *groups, run, true, false), 1'595'000, 2.0);
  // All-gathers overlapping the next forward, layer 0's first (forward reads it first): it waits
  // for the last update (layer 0's), so the next forward starts 75 us after the updates end,
  // and each later gather is ready before its layer's forward: 400 + 800 + 300 + 80 + 75.
  EXPECT_NEAR(shardedPredictionNs(m.model, *groups, run, false, true), 1'655'000, 2.0);
  // Both: 400 + 800 + 75 + 20 (as above), then layer 0's gather, 75.
  EXPECT_NEAR(shardedPredictionNs(m.model, *groups, run, true, true), 1'370'000, 2.0);
}

// DeepSpeed's ZeRO 1/2 gathers inside its step and has no setting to overlap it: for its runs
// (tuneRun tells from the frameworks a run shows) overlap_param_gather is predicted, never
// recommended.
TEST(ShardedOverlap, AFrameworkWithoutTheGatheringsOverlapIsNotRecommendedIt) {
  const testing::ModelledRun m = testing::modelRun(zeroOneTrainer());
  const auto recommended = [&](bool param_gather_setting) {
    TuneOptions options;
    options.param_gather_setting = param_gather_setting;
    auto report = tuneModel(m.model, "synthetic", 4, options);
    EXPECT_TRUE(report.ok()) << report.message();
    EXPECT_EQ(report->overlap_param_gather.size(), 2u);
    std::vector<std::string> settings;
    for (const SettingPrediction& s : report->sharded_recommended) settings.push_back(s.setting + "=" + s.value);
    return settings;
  };
  EXPECT_EQ(recommended(true), (std::vector<std::string>{"overlap_grad_reduce=on", "overlap_param_gather=on"}));
  EXPECT_EQ(recommended(false), (std::vector<std::string>{"overlap_grad_reduce=on"}));
}

TEST(ShardedOverlap, ASynchronousProcessGroupsCollectivesAreWaitedAtOnceAndTheirWaitsMoved) {
  // A synchronous process group's collectives (PyTorch's async_op=False), on a stream of their
  // own but waited for at once, are no overlap; with the settings on, the framework issues them
  // after their producers (reduce-scatters) or first needed first (all-gathers) and waits where
  // the results are needed: the same steps as moving the in-line run's collectives. (An
  // overlapped placement is checked on framework_trainer's runs: tuner_sharded_setting.)
  SyntheticTrainer t = zeroOneTrainer();
  t.mode = SyntheticTrainer::Mode::Zero1Synchronous;
  const testing::ModelledRun m = testing::modelRun(t);
  EXPECT_NEAR(m.model.measuredIterationNs(), 1'880'000, 2.0);  // as in line: the waits cost nothing
  auto groups = recordedGroups(m.model);
  ASSERT_TRUE(groups.ok()) << groups.message();
  const ShardedOptimizerRun run = findShardedOptimizer(m.model);
  ASSERT_TRUE(run.found) << run.why_not;
  EXPECT_EQ(run.reduce_placement, Placement::WaitedAtOnce);
  EXPECT_EQ(run.gather_placement, Placement::WaitedAtOnce);
  EXPECT_FALSE(run.overlapped(ShardedOverlap::GradReduce));

  auto report = tuneModel(m.model, "synthetic", t.ranks, TuneOptions{});
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_TRUE(report->sharded_not_predicted.empty());
  ASSERT_EQ(report->overlap_grad_reduce.size(), 2u);
  EXPECT_EQ(report->overlap_grad_reduce[0].value, "off");
  EXPECT_NEAR(report->overlap_grad_reduce[1].predicted_iteration_ms, 1.595, 2e-6);
  ASSERT_EQ(report->overlap_param_gather.size(), 2u);
  EXPECT_NEAR(report->overlap_param_gather[1].predicted_iteration_ms, 1.655, 2e-6);
  EXPECT_NEAR(report->sharded_both_on_ms, 1.370, 2e-6);
  EXPECT_EQ(report->sharded_recommended.size(), 2u);
}

TEST(ShardedOverlap, ReduceScattersOverlappingBackwardAreSeenSoAndTheGathersStillPredicted) {
  SyntheticTrainer t = zeroOneTrainer();
  t.mode = SyntheticTrainer::Mode::Zero1Overlapped;
  const testing::ModelledRun m = testing::modelRun(t);
  // Backward 400 + 800, layer 0's reduce-scatter 75 after it, the updates 80 after that (they
  // wait for the last), the all-gathers in line 300.
  EXPECT_NEAR(m.model.measuredIterationNs(), 1'655'000, 2.0);
  const ShardedOptimizerRun run = findShardedOptimizer(m.model);
  ASSERT_TRUE(run.found) << run.why_not;
  EXPECT_EQ(run.reduce_placement, Placement::Overlapped);
  EXPECT_EQ(run.gather_placement, Placement::InLine);

  auto report = tuneModel(m.model, "synthetic", t.ranks, TuneOptions{});
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_EQ(report->overlap_grad_reduce.size(), 1u);  // on as recorded; turning it off is not predicted
  EXPECT_EQ(report->overlap_grad_reduce[0].value, "on");
  // The all-gathers moved: layer 0's waits for the last update (1 355), the next forward starts
  // 75 later, and each later gather is ready before its layer's forward.
  ASSERT_EQ(report->overlap_param_gather.size(), 2u);
  EXPECT_NEAR(report->overlap_param_gather[1].predicted_iteration_ms, 1.430, 2e-6);
  EXPECT_EQ(report->sharded_both_on_ms, 0.0);  // one of them was on already
}

TEST(ShardedOverlap, GathersInTheNextForwardAreTheStepsOwnAndSeenOverlapped) {
  // Megatron-LM's --overlap-param-gather: the last step's parameters gathered in this step's
  // forward, each layer's forward waiting for its own.
  SyntheticTrainer t = zeroOneTrainer();
  t.mode = SyntheticTrainer::Mode::Zero1GatherInForward;
  const testing::ModelledRun m = testing::modelRun(t);
  // Layer 0's gather 75 after the step starts, the forward after it (the later gathers are ready
  // before their layers), backward, layer 0's reduce-scatter, the updates: 75 + 400 + 800 + 75 +
  // 80, the step the run with its reduce-scatters overlapped was predicted with the setting on.
  EXPECT_NEAR(m.model.measuredIterationNs(), 1'430'000, 2.0);
  const ShardedOptimizerRun run = findShardedOptimizer(m.model);
  ASSERT_TRUE(run.found) << run.why_not;
  EXPECT_EQ(run.all_gathers, 4u);
  EXPECT_EQ(run.parameter_bytes, 4u * (4u << 20));
  EXPECT_EQ(run.reduce_placement, Placement::Overlapped);
  EXPECT_EQ(run.gather_placement, Placement::Overlapped);
  auto report = tuneModel(m.model, "synthetic", t.ranks, TuneOptions{});
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_EQ(report->overlap_param_gather.size(), 1u);  // on as recorded
  EXPECT_EQ(report->overlap_param_gather[0].value, "on");
  EXPECT_EQ(report->overlap_param_gather[0].buckets, 4u);
  // Its bucket sizes are predicted (ShardedBuckets.GathersInTheNextForwardAreCutAgainAsWorkedOut).
  EXPECT_TRUE(report->sharded_buckets_why_not.empty()) << report->sharded_buckets_why_not;
}

TEST(ShardedOverlap, ARunWithoutReduceScattersHasNone) {
  SyntheticTrainer t = zeroOneTrainer();
  t.mode = SyntheticTrainer::Mode::Overlap;
  const testing::ModelledRun m = testing::modelRun(t);
  auto groups = recordedGroups(m.model);
  ASSERT_TRUE(groups.ok()) << groups.message();
  const ShardedOptimizerRun run = findShardedOptimizer(m.model);
  EXPECT_FALSE(run.found);
  EXPECT_EQ(run.why_not, "the run's steady iterations issue no reduce-scatter (no sharded optimizer's gradients)");
}

TEST(ShardedOverlap, AReportIsPutInTheWordsOfTheFrameworkItShows) {
  TuneReport r;
  r.sharded.found = true;  // both in line: "off" recorded, "on" predicted
  for (ShardedOverlap which : {ShardedOverlap::GradReduce, ShardedOverlap::ParamGather}) {
    SettingPrediction off{settingName(which), "off", "as the run was recorded", 17, 93.8, 0.0, {}};
    SettingPrediction on{settingName(which), "on", shardedOverlapHowTo(which, ""), 17, 87.5, 0.067, {}};
    (which == ShardedOverlap::GradReduce ? r.overlap_grad_reduce : r.overlap_param_gather) = {off, on};
    r.sharded_recommended.push_back(on);
  }
  TuneReport megatron = r;
  megatron.frameworks.push_back({"Megatron-LM", "ranges named like \"megatron\"", {}, {}});
  nameShardedSettings(megatron);
  EXPECT_EQ(megatron.overlap_grad_reduce[0].how_to_apply, "as the run was recorded");
  EXPECT_EQ(megatron.overlap_grad_reduce[1].how_to_apply, shardedOverlapHowTo(ShardedOverlap::GradReduce, "Megatron-LM"));
  ASSERT_EQ(megatron.sharded_recommended.size(), 2u);
  EXPECT_EQ(megatron.sharded_recommended[1].how_to_apply,
            shardedOverlapHowTo(ShardedOverlap::ParamGather, "Megatron-LM"));

  TuneReport deepspeed = r;
  deepspeed.frameworks.push_back({"DeepSpeed", "ranges named like \"deepspeed\"", {}, {}});
  nameShardedSettings(deepspeed);
  EXPECT_EQ(deepspeed.sharded_recommended[0].how_to_apply,
            R"("overlap_comm": true under "zero_optimization" in the DeepSpeed config)");
  EXPECT_EQ(deepspeed.overlap_param_gather[1].how_to_apply,
            shardedOverlapHowTo(ShardedOverlap::ParamGather, "DeepSpeed"));

  TuneReport unnamed = r;
  nameShardedSettings(unnamed);
  EXPECT_EQ(unnamed.sharded_recommended[0].how_to_apply, shardedOverlapHowTo(ShardedOverlap::GradReduce, ""));
}

TEST(ShardedOverlap, TheSettingIsNamedInTheFrameworksWords) {
  EXPECT_EQ(shardedOverlapHowTo(ShardedOverlap::GradReduce, "Megatron-LM"),
            "--overlap-grad-reduce on Megatron-LM's command line (with --use-distributed-optimizer)");
  EXPECT_EQ(shardedOverlapHowTo(ShardedOverlap::GradReduce, "DeepSpeed"),
            R"("overlap_comm": true under "zero_optimization" in the DeepSpeed config)");
  EXPECT_EQ(shardedOverlapHowTo(ShardedOverlap::ParamGather, "Megatron-LM"),
            "--overlap-param-gather on Megatron-LM's command line (with --use-distributed-optimizer and "
            "--overlap-grad-reduce, which it requires)");
  // A run that names neither framework gets each one's words.
  const std::string either = shardedOverlapHowTo(ShardedOverlap::GradReduce, "");
  EXPECT_NE(either.find("Megatron-LM: --overlap-grad-reduce"), std::string::npos) << either;
  EXPECT_NE(either.find(R"("overlap_comm": true)"), std::string::npos) << either;
}

}  // namespace
}  // namespace syncopate::tuner
