// A sharded optimizer's bucket size (sharded_buckets.hpp): its layout read from the synthetic
// trainer's ZeRO-1 run, and other sizes predicted against steps worked out by hand. The
// all-gathers overlapping forward are checked on framework_trainer's runs
// (tuner_sharded_bucket_size): the synthetic trainer gathers in line.
#include <gtest/gtest.h>

#include <algorithm>

#include "synthetic_trainer.hpp"
#include "syncopate/tuner/sharded_buckets.hpp"
#include "syncopate/tuner/tune.hpp"

namespace syncopate::tuner {
namespace {

using testing::SyntheticTrainer;

// 4 ranks, 4 layers of 1 Mi elements (4 MiB) a bucket each: forward 100 us a layer, backward
// 200, the shard's update 20, each layer's reduce-scatter and all-gather 45 us, all of it bytes
// (no latency: a collective's time is proportional to its size).
SyntheticTrainer bucketsTrainer(SyntheticTrainer::Mode mode) {
  SyntheticTrainer t;
  t.mode = mode;
  t.forward_ns = 100'000;
  t.backward_ns = 200'000;
  t.update_ns = 20'000;
  t.layer_floats = 1 << 20;
  t.latency_ns = 0;
  t.ns_per_byte = 45'000.0 / (0.75 * 4.0 * (1 << 20));
  return t;
}

TEST(ShardedBuckets, ABucketClosesOnceItHoldsTheSize) {
  // Tensors of 100, 300, 50, 400 and 200 floats; buckets of 500: 850 once the fourth is in.
  EXPECT_EQ(shardedBucketOf({400, 1200, 200, 1600, 800}, 4, 500), (std::vector<std::size_t>{0, 0, 0, 0, 1}));
  // Of 100: the 50 is short of it, so the 400 joins it.
  EXPECT_EQ(shardedBucketOf({400, 1200, 200, 1600, 800}, 4, 100), (std::vector<std::size_t>{0, 1, 2, 2, 3}));
  EXPECT_EQ(shardedBucketOf({400, 1200}, 4, 1'000'000), (std::vector<std::size_t>{0, 0}));
}

TEST(ShardedBuckets, TheLayoutIsWhereKernelsPointInTheBuckets) {
  const SyntheticTrainer t = bucketsTrainer(SyntheticTrainer::Mode::Zero1Overlapped);
  const testing::ModelledRun m = testing::modelRun(t);
  const ShardedOptimizerRun run = findShardedOptimizer(m.model);
  ASSERT_TRUE(run.found) << run.why_not;
  const ShardedLayout layout = findShardedLayout(m.model, run);
  ASSERT_TRUE(layout.found) << layout.why_not;
  EXPECT_EQ(layout.gradient_element_bytes, 4u);
  EXPECT_EQ(layout.parameter_element_bytes, 4u);
  ASSERT_EQ(layout.gradients.size(), 4u);  // every rank
  // Backward fills the last layer's bucket first, and each bucket holds one layer's tensor.
  ASSERT_EQ(layout.gradients[0].size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(layout.gradients[0][k].base, testing::gradientAddress(3 - static_cast<int>(k), t));
    EXPECT_EQ(layout.gradients[0][k].bytes, 4u << 20);
    EXPECT_EQ(layout.gradients[0][k].tensor_offsets, (std::vector<std::uint64_t>{0}));
    EXPECT_EQ(layout.parameters[0][k].base, testing::parameterAddress(3 - static_cast<int>(k), t));
  }
  EXPECT_EQ(layout.tensorBytes(false), (std::vector<std::uint64_t>(4, 4u << 20)));
  EXPECT_EQ(layout.tensorBytes(true), (std::vector<std::uint64_t>(4, 4u << 20)));
  EXPECT_EQ(layout.recordedBucketOf(false), (std::vector<std::size_t>{0, 1, 2, 3}));
}

TEST(ShardedBuckets, OtherSizesArePredictedAsWorkedOut) {
  const testing::ModelledRun m = testing::modelRun(bucketsTrainer(SyntheticTrainer::Mode::Zero1Overlapped));
  // Forward 400, backward 800 (layer 3's ends at 600, ..., layer 0's at 1 200), each layer's
  // reduce-scatter 45 after its backward, the updates 80 after layer 0's, the all-gathers in line
  // 180: 1 200 + 45 + 80 + 180.
  EXPECT_NEAR(m.model.measuredIterationNs(), 1'505'000, 2.0);
  auto report = tuneModel(m.model, "synthetic", 4, TuneOptions{});
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_TRUE(report->sharded_buckets_why_not.empty()) << report->sharded_buckets_why_not;
  EXPECT_NEAR(report->sharded_buckets_baseline_ms, 1.505, 2e-6);  // the recorded buckets, rewritten
  const std::vector<SettingPrediction>& sizes = report->sharded_bucket_sizes;
  ASSERT_EQ(sizes.size(), 3u);
  // 1 M elements: a layer a bucket, as recorded.
  EXPECT_EQ(sizes[0].setting, "bucket_size");
  EXPECT_EQ(sizes[0].value, "1000000");
  EXPECT_EQ(sizes[0].buckets, 4u);
  EXPECT_NEAR(sizes[0].predicted_iteration_ms, 1.505, 2e-6);
  // 2 M: layers 3 and 2 reduced after layer 2's backward (800 to 890), layers 1 and 0 after
  // layer 0's (1 200 to 1 290); the updates, then two all-gathers of 90: 1 290 + 80 + 180.
  EXPECT_EQ(sizes[1].value, "2000000");
  EXPECT_EQ(sizes[1].buckets, 2u);
  EXPECT_NEAR(sizes[1].predicted_iteration_ms, 1.550, 2e-6);
  // 5 M: one bucket, reduced after backward (180), the updates, one all-gather of 180 (10 M and
  // more bucket the same way and are not repeated).
  EXPECT_EQ(sizes[2].value, "5000000");
  EXPECT_EQ(sizes[2].buckets, 1u);
  EXPECT_NEAR(sizes[2].predicted_iteration_ms, 1.640, 2e-6);
  for (const SettingPrediction& s : report->sharded_recommended) EXPECT_NE(s.setting, "bucket_size") << s.value;
}

// Megatron-LM's own --overlap-param-gather: the last step's parameters gathered in this step's
// forward, first needed first, each layer's forward waiting for its own (the reduce-scatters
// overlapping backward). Worked out by hand (45 us a layer's collective, no latency):
//   1 M, a layer a bucket: layer 0's gather (45), forward 400, backward 800, layer 0's
//     reduce-scatter 45, the updates 80: 1 370, the run itself;
//   2 M: layers 1 and 0 gathered first (90), forward, backward, layers 1 and 0 reduced (90), the
//     updates: 1 460;
//   5 M, one bucket: gathered (180), forward, backward, reduced (180), the updates: 1 640.
TEST(ShardedBuckets, GathersInTheNextForwardAreCutAgainAsWorkedOut) {
  const SyntheticTrainer t = bucketsTrainer(SyntheticTrainer::Mode::Zero1GatherInForward);
  const testing::ModelledRun m = testing::modelRun(t);
  EXPECT_NEAR(m.model.measuredIterationNs(), 1'370'000, 2.0);
  const ShardedOptimizerRun run = findShardedOptimizer(m.model);
  ASSERT_TRUE(run.found) << run.why_not;
  const ShardedLayout layout = findShardedLayout(m.model, run);
  ASSERT_TRUE(layout.found) << layout.why_not;
  // The parameter buckets in layout order: the reverse of the order forward reads them.
  ASSERT_EQ(layout.parameters[0].size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(layout.parameters[0][k].base, testing::parameterAddress(3 - static_cast<int>(k), t));
  }
  auto report = tuneModel(m.model, "synthetic", 4, TuneOptions{});
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_TRUE(report->sharded_buckets_why_not.empty()) << report->sharded_buckets_why_not;
  EXPECT_NEAR(report->sharded_buckets_baseline_ms, 1.370, 2e-6);  // the recorded buckets, rewritten
  const std::vector<SettingPrediction>& sizes = report->sharded_bucket_sizes;
  ASSERT_EQ(sizes.size(), 3u);
  const std::vector<std::string> values{"1000000", "2000000", "5000000"};
  const std::vector<std::size_t> buckets{4, 2, 1};
  const std::vector<double> steps_ms{1.370, 1.460, 1.640};
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(sizes[k].value, values[k]);
    EXPECT_EQ(sizes[k].buckets, buckets[k]);
    EXPECT_NEAR(sizes[k].predicted_iteration_ms, steps_ms[k], 2e-6) << sizes[k].value;
  }
}

TEST(ShardedBuckets, InLineWithoutLatencyEverySizeTakesTheSame) {
  const testing::ModelledRun m = testing::modelRun(bucketsTrainer(SyntheticTrainer::Mode::Zero1));
  // 400 + 800 + 180 of reduce-scatters + 80 + 180 of all-gathers, whatever the buckets.
  EXPECT_NEAR(m.model.measuredIterationNs(), 1'640'000, 2.0);
  auto report = tuneModel(m.model, "synthetic", 4, TuneOptions{});
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_EQ(report->sharded_bucket_sizes.size(), 3u) << report->sharded_buckets_why_not;
  for (const SettingPrediction& s : report->sharded_bucket_sizes) {
    EXPECT_NEAR(s.predicted_iteration_ms, 1.640, 2e-6) << s.value;
    EXPECT_EQ(s.with, "");
  }
  // Both overlaps are recommended, but in line they are schedules, not rewrites of the calls: both
  // together are tried, then overlap_grad_reduce alone.
  EXPECT_EQ(report->sharded_buckets_not_predicted,
            (std::vector<std::string>{
                "every size with overlap_grad_reduce=on, overlap_param_gather=on: the reduce-scatters and the "
                "all-gathers were issued in line, where a setting is a schedule of the model rather than a rewrite of "
                "the calls, and a schedule is not combined with another cut of the buckets",
                "every size with overlap_grad_reduce=on: the reduce-scatters were issued in line, where a setting is a "
                "schedule of the model rather than a rewrite of the calls, and a schedule is not combined with another "
                "cut of the buckets"}));
}

// PyTorch's synchronous collectives (on the process group's stream, waited for at once): every
// size as recorded takes the same (no latency). Both overlaps are recommended (overlap_grad_reduce
// 1 460, overlap_param_gather 1 505, both 1 325), and each size is predicted with both on: the
// step waits for each bucket just before its first update, layers 3 to 0, and the all-gathers
// follow the step on the process group's stream, first needed first (layer 0's first), each
// layer's next forward waiting for its own (sharded_waits.hpp); the step is from one forward's
// start to the next's:
//   1 M, a layer a bucket: the updates from 1 200, layer 0's after its reduce-scatter (1 245),
//     1 260 to 1 280; layer 0's all-gather 1 280 to 1 325, when the next forward starts: 1 325,
//     the settings' own prediction;
//   2 M: layers 3 and 2 reduced 800 to 890, layers 1 and 0 1 200 to 1 290; the updates of 3 and 2
//     1 200 to 1 240, of 1 and 0 1 290 to 1 330; layers 1 and 0 gathered 1 330 to 1 420: 1 420;
//   5 M, one bucket: reduced 1 200 to 1 380, the updates to 1 460, gathered to 1 640: 1 640.
// With overlap_grad_reduce alone (a framework without the other setting, DeepSpeed), the
// all-gathers stay in line after the updates, 180 us:
//   1 M: 1 280 + 180 = 1 460; 2 M: 1 330 + 180 = 1 510; 5 M: 1 640.
TEST(ShardedBuckets, SynchronousSizesArePredictedAsRecordedAndWithTheOverlapsOn) {
  const testing::ModelledRun m = testing::modelRun(bucketsTrainer(SyntheticTrainer::Mode::Zero1Synchronous));
  EXPECT_NEAR(m.model.measuredIterationNs(), 1'640'000, 2.0);
  const std::vector<std::string> values{"1000000", "2000000", "5000000"};
  const auto check = [&](const TuneReport& report, const std::string& with, const std::string& flags,
                         const std::vector<double>& overlapped_ms) {
    ASSERT_EQ(report.sharded_bucket_sizes.size(), 6u)
        << (report.sharded_buckets_not_predicted.empty() ? report.sharded_buckets_why_not : report.sharded_buckets_not_predicted[0]);
    EXPECT_TRUE(report.sharded_buckets_not_predicted.empty()) << report.sharded_buckets_not_predicted.front();
    for (std::size_t k = 0; k < 3; ++k) {
      const SettingPrediction& recorded = report.sharded_bucket_sizes[k];
      EXPECT_EQ(recorded.value, values[k]);
      EXPECT_EQ(recorded.with, "");
      EXPECT_NEAR(recorded.predicted_iteration_ms, 1.640, 2e-6) << recorded.value;
      const SettingPrediction& on = report.sharded_bucket_sizes[3 + k];
      EXPECT_EQ(on.value, values[k]);
      EXPECT_EQ(on.with, with);
      EXPECT_NEAR(on.predicted_iteration_ms, overlapped_ms[k], 2e-6) << on.value;
      EXPECT_NE(on.how_to_apply.find(flags + values[k]), std::string::npos) << on.how_to_apply;
    }
    // No size adds 2% to the overlaps' own prediction.
    for (const SettingPrediction& s : report.sharded_recommended) EXPECT_NE(s.setting, "bucket_size") << s.value;
  };
  auto report = tuneModel(m.model, "synthetic", 4, TuneOptions{});
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_EQ(report->overlap_grad_reduce.size(), 2u);
  EXPECT_NEAR(report->overlap_grad_reduce[1].predicted_iteration_ms, 1.460, 2e-6);
  ASSERT_EQ(report->overlap_param_gather.size(), 2u);
  EXPECT_NEAR(report->overlap_param_gather[1].predicted_iteration_ms, 1.505, 2e-6);
  EXPECT_NEAR(report->sharded_both_on_ms, 1.325, 2e-6);
  check(*report, "overlap_grad_reduce=on, overlap_param_gather=on", "--overlap-grad-reduce --overlap-param-gather --ddp-bucket-size ",
        {1.325, 1.420, 1.640});

  TuneOptions without_param_gather;
  without_param_gather.param_gather_setting = false;
  auto grad_reduce_only = tuneModel(m.model, "synthetic", 4, without_param_gather);
  ASSERT_TRUE(grad_reduce_only.ok()) << grad_reduce_only.message();
  ASSERT_EQ(grad_reduce_only->sharded_recommended.size(), 1u);
  EXPECT_EQ(grad_reduce_only->sharded_recommended[0].setting, "overlap_grad_reduce");
  check(*grad_reduce_only, "overlap_grad_reduce=on", "--overlap-grad-reduce --ddp-bucket-size ", {1.460, 1.510, 1.640});
  // With one bucket, overlapped and synchronous look the same: the sentence says what to do.
  SyntheticTrainer one = bucketsTrainer(SyntheticTrainer::Mode::Zero1Synchronous);
  one.layers = 1;
  const testing::ModelledRun single = testing::modelRun(one);
  auto single_report = tuneModel(single.model, "synthetic", 4, TuneOptions{});
  ASSERT_TRUE(single_report.ok()) << single_report.message();
  EXPECT_EQ(single_report->sharded_buckets_why_not,
            "the optimizer's collectives are waited for at once, and with one bucket a collective overlapping compute "
            "cannot be told from a synchronous one (both are waited for right after the work before them): record the "
            "job with a smaller bucket size to have the size predicted");
}

// Megatron-LM takes --overlap-param-gather only with --overlap-grad-reduce. Where the gathering's
// overlap alone is recommended (backward and the updates, 1 us a layer, leave the reduce-scatters
// nothing to hide behind: under 2%; the gathers hide behind the next forward's 100 us a layer),
// the sizes are predicted with both on, on both together's own prediction, and their words turn
// both on. The size that cuts the recorded buckets (a layer a bucket) gives that prediction back.
TEST(ShardedBuckets, ASizeWithTheGatheringsOverlapAloneRecommendedHasTheReductionsOnToo) {
  SyntheticTrainer t = bucketsTrainer(SyntheticTrainer::Mode::Zero1Synchronous);
  t.backward_ns = 1'000;
  t.update_ns = 1'000;
  const testing::ModelledRun m = testing::modelRun(t);
  auto report = tuneModel(m.model, "synthetic", 4, TuneOptions{});
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_EQ(report->overlap_grad_reduce.size(), 2u);
  EXPECT_LT(report->overlap_grad_reduce[1].gain, 0.02);
  ASSERT_EQ(report->overlap_param_gather.size(), 2u);
  EXPECT_GE(report->overlap_param_gather[1].gain, 0.02);
  ASSERT_GT(report->sharded_both_on_ms, 0.0);
  std::vector<std::string> recommended;
  for (const SettingPrediction& s : report->sharded_recommended) recommended.push_back(s.setting + "=" + s.value);
  ASSERT_FALSE(recommended.empty());
  EXPECT_EQ(recommended.front(), "overlap_param_gather=on");
  EXPECT_EQ(std::count(recommended.begin(), recommended.end(), "overlap_grad_reduce=on"), 0);
  EXPECT_TRUE(report->sharded_buckets_not_predicted.empty()) << report->sharded_buckets_not_predicted.front();
  const auto row = std::find_if(report->sharded_bucket_sizes.begin(), report->sharded_bucket_sizes.end(),
                                [](const SettingPrediction& s) {
                                  return s.value == "1000000" && s.with == "overlap_grad_reduce=on, overlap_param_gather=on";
                                });
  ASSERT_NE(row, report->sharded_bucket_sizes.end());
  EXPECT_DOUBLE_EQ(row->predicted_iteration_ms, report->sharded_both_on_ms);
  EXPECT_NE(row->how_to_apply.find("--overlap-grad-reduce --overlap-param-gather --ddp-bucket-size 1000000"),
            std::string::npos)
      << row->how_to_apply;
}

TEST(ShardedBuckets, TheSizeIsNamedInTheFrameworksWords) {
  EXPECT_EQ(shardedBucketSizeHowTo(40'000'000, "Megatron-LM"), "--ddp-bucket-size 40000000 on Megatron-LM's command line");
  EXPECT_EQ(shardedBucketSizeHowTo(5'000'000, "DeepSpeed"),
            R"("reduce_bucket_size": 5000000, "allgather_bucket_size": 5000000 under "zero_optimization" in the )"
            "DeepSpeed config");
  const std::string either = shardedBucketSizeHowTo(5'000'000, "");
  EXPECT_NE(either.find("Megatron-LM: --ddp-bucket-size 5000000"), std::string::npos) << either;
  EXPECT_NE(either.find(R"("reduce_bucket_size": 5000000)"), std::string::npos) << either;

  TuneReport r;
  r.sharded.found = true;
  SettingPrediction size{kShardedBucketSize, "5000000", shardedBucketSizeHowTo(5'000'000, ""), 17, 83.6, 0.029, {}};
  r.sharded_bucket_sizes = {size};
  r.sharded_recommended = {size};
  r.frameworks.push_back({"Megatron-LM", "ranges named like \"megatron\"", {}, {}});
  nameShardedSettings(r);
  EXPECT_EQ(r.sharded_bucket_sizes[0].how_to_apply, "--ddp-bucket-size 5000000 on Megatron-LM's command line");
  EXPECT_EQ(r.sharded_recommended[0].how_to_apply, "--ddp-bucket-size 5000000 on Megatron-LM's command line");

  // A size predicted with overlaps turned on says to turn them on too; DeepSpeed, which cannot
  // overlap the gathering, is not offered a size with it.
  const ShardedOverlaps grad_reduce{true, false}, both{true, true};
  EXPECT_EQ(shardedBucketSizeHowTo(5'000'000, "Megatron-LM", grad_reduce),
            "--overlap-grad-reduce --ddp-bucket-size 5000000 on Megatron-LM's command line");
  EXPECT_EQ(shardedBucketSizeHowTo(5'000'000, "Megatron-LM", both),
            "--overlap-grad-reduce --overlap-param-gather --ddp-bucket-size 5000000 on Megatron-LM's command line");
  EXPECT_EQ(shardedBucketSizeHowTo(5'000'000, "DeepSpeed", grad_reduce),
            R"("overlap_comm": true, "reduce_bucket_size": 5000000, "allgather_bucket_size": 5000000 under )"
            R"("zero_optimization" in the DeepSpeed config)");
  EXPECT_EQ(shardedBucketSizeHowTo(5'000'000, "", both),
            "Megatron-LM: --overlap-grad-reduce --overlap-param-gather --ddp-bucket-size 5000000; an optimizer of your "
            "own: close a bucket once it holds 5000000 elements or more, reduce-scatter each on a stream of its own as "
            "soon as backward has written it, all-gather each on a stream of its own after the step, first needed "
            "first, forward waiting for each just before it reads it");
  EXPECT_EQ(both.with(), "overlap_grad_reduce=on, overlap_param_gather=on");
  EXPECT_TRUE(ShardedOverlaps::namedIn(both.with()).param_gather);
  EXPECT_FALSE(ShardedOverlaps::namedIn("overlap_grad_reduce=on").param_gather);
  SettingPrediction overlapped = size;
  overlapped.with = "overlap_grad_reduce=on";
  r.sharded_bucket_sizes = {size, overlapped};
  r.frameworks = {{"DeepSpeed", "ranges named like \"deepspeed\"", {}, {}}};
  nameShardedSettings(r);
  EXPECT_EQ(r.sharded_bucket_sizes[1].how_to_apply, shardedBucketSizeHowTo(5'000'000, "DeepSpeed", grad_reduce));
  EXPECT_EQ(r.sharded_bucket_sizes[0].how_to_apply, shardedBucketSizeHowTo(5'000'000, "DeepSpeed"));
}

}  // namespace
}  // namespace syncopate::tuner
