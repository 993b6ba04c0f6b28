#include "framework_trainer/ddp_buckets.hpp"
#include "framework_trainer/fsdp_units.hpp"
#include "framework_trainer/op_counts.hpp"
#include "framework_trainer/options.hpp"
#include "framework_trainer/report.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace framework_trainer {
namespace {

ParseOutcome parse(const std::vector<const char*>& args) {
  std::vector<const char*> argv{"framework_trainer"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parseOptions(static_cast<int>(argv.size()), argv.data());
}

TEST(FrameworkOptions, Defaults) {
  const ParseOutcome p = parse({});
  ASSERT_TRUE(p.options) << p.err;
  EXPECT_EQ(p.options->config.name, "gpt2-small-8k");
  EXPECT_EQ(p.options->mode, SyncMode::Naive);
  EXPECT_EQ(p.options->bucketBytes(), 25u << 20);
  EXPECT_EQ(p.options->segmentBytes(), 256u << 20);
  EXPECT_EQ(p.options->totalIterations(), 9);
  EXPECT_EQ(p.options->bootstrap, BootstrapKind::Auto);
}

TEST(FrameworkOptions, ConfigOverridesAndMode) {
  const ParseOutcome p = parse({"--config", "tiny", "--layers", "3", "--vocab", "1000", "--micro-batch", "4", "--mode",
                                "ddp", "--bucket-mb", "1", "--iterations", "3", "--warmup", "0", "--bootstrap", "env"});
  ASSERT_TRUE(p.options) << p.err;
  EXPECT_EQ(p.options->config.layers, 3);
  EXPECT_EQ(p.options->config.vocab, 1000);
  EXPECT_EQ(p.options->config.hidden, 128);
  EXPECT_EQ(p.options->config.micro_batch, 4);
  EXPECT_EQ(p.options->mode, SyncMode::Ddp);
  EXPECT_EQ(p.options->bucketBytes(), 1u << 20);
  EXPECT_EQ(p.options->totalIterations(), 3);
  EXPECT_EQ(p.options->bootstrap, BootstrapKind::Env);
  const ParseOutcome zero1 = parse({"--mode", "zero1"});
  ASSERT_TRUE(zero1.options) << zero1.err;
  EXPECT_EQ(zero1.options->mode, SyncMode::Zero1);
  EXPECT_STREQ(toString(SyncMode::Zero1), "zero1");
  EXPECT_FALSE(zero1.options->overlap_grad_reduce);
  EXPECT_FALSE(zero1.options->overlap_param_gather);
  const ParseOutcome overlapped = parse({"--mode", "zero1", "--overlap-grad-reduce", "--overlap-param-gather"});
  ASSERT_TRUE(overlapped.options) << overlapped.err;
  EXPECT_TRUE(overlapped.options->overlap_grad_reduce);
  EXPECT_TRUE(overlapped.options->overlap_param_gather);
  EXPECT_FALSE(overlapped.options->process_group_stream);
  const ParseOutcome sized = parse({"--mode", "zero1", "--bucket-size", "40000000"});
  ASSERT_TRUE(sized.options) << sized.err;
  EXPECT_EQ(sized.options->bucket_size, 40000000u);
  EXPECT_EQ(zero1.options->bucket_size, 0u);
  const ParseOutcome group = parse({"--mode", "zero1", "--process-group-stream"});
  ASSERT_TRUE(group.options) << group.err;
  EXPECT_TRUE(group.options->process_group_stream);
  const ParseOutcome fsdp = parse({"--mode", "fsdp"});
  ASSERT_TRUE(fsdp.options) << fsdp.err;
  EXPECT_EQ(fsdp.options->mode, SyncMode::Fsdp);
  EXPECT_STREQ(toString(SyncMode::Fsdp), "fsdp");
  EXPECT_FALSE(fsdp.options->fsdp_streams);
  // PyTorch FSDP's defaults.
  EXPECT_EQ(fsdp.options->backward_prefetch, BackwardPrefetch::Pre);
  EXPECT_FALSE(fsdp.options->forward_prefetch);
  EXPECT_TRUE(fsdp.options->limit_all_gathers);
  const ParseOutcome streams = parse({"--mode", "fsdp", "--fsdp-streams", "--backward-prefetch", "post",
                                      "--forward-prefetch", "--limit-all-gathers", "false"});
  ASSERT_TRUE(streams.options) << streams.err;
  EXPECT_TRUE(streams.options->fsdp_streams);
  EXPECT_EQ(streams.options->backward_prefetch, BackwardPrefetch::Post);
  EXPECT_STREQ(toString(BackwardPrefetch::Post), "post");
  EXPECT_TRUE(streams.options->forward_prefetch);
  EXPECT_FALSE(streams.options->limit_all_gathers);
  const ParseOutcome none = parse({"--mode", "fsdp", "--fsdp-streams", "--backward-prefetch", "none"});
  ASSERT_TRUE(none.options) << none.err;
  EXPECT_EQ(none.options->backward_prefetch, BackwardPrefetch::None);
}

// DDP's first bucket as DistributedDataParallel cuts it: at 1 MiB (or
// torch.distributed._DEFAULT_FIRST_BUCKET_BYTES) with bucket_cap_mb unset, at the cap with it
// given; zero1's buckets keep the 1 MiB first bucket whatever the cap.
TEST(FrameworkOptions, TheFirstBucketAsDdpCutsIt) {
  const auto first = [](const std::vector<const char*>& args) {
    const ParseOutcome p = parse(args);
    EXPECT_TRUE(p.options) << p.err;
    return p.options ? p.options->bucketSizing().first_bytes : 0;
  };
  EXPECT_EQ(first({"--mode", "ddp"}), 1u << 20);
  EXPECT_EQ(first({"--mode", "ddp", "--bucket-mb", "5"}), 5u << 20);
  EXPECT_EQ(first({"--mode", "ddp", "--first-bucket-bytes", "4194304"}), 4u << 20);
  EXPECT_EQ(first({"--mode", "zero1", "--bucket-mb", "5"}), 1u << 20);
  const ParseOutcome views = parse({"--mode", "ddp", "--gradient-as-bucket-view"});
  ASSERT_TRUE(views.options) << views.err;
  EXPECT_TRUE(views.options->gradient_as_bucket_view);
  EXPECT_FALSE(parse({"--mode", "ddp"}).options->gradient_as_bucket_view);
}

TEST(FrameworkOptions, ErrorsExitTwoWithASentence) {
  const auto expectError = [](const std::vector<const char*>& args, const std::string& says) {
    const ParseOutcome p = parse(args);
    EXPECT_FALSE(p.options);
    EXPECT_EQ(p.exit_code, 2);
    EXPECT_NE(p.err.find(says), std::string::npos) << p.err;
  };
  expectError({"--mode", "overlap"}, "--mode must be naive, ddp, zero1 or fsdp (got 'overlap')");
  // fsdp's units are the blocks: a bucket cap would be silently ignored.
  expectError({"--mode", "fsdp", "--bucket-mb", "1"},
              "--bucket-mb does not apply to --mode fsdp: its units are the model's blocks");
  expectError({"--mode", "ddp", "--overlap-grad-reduce"}, "--overlap-grad-reduce applies to --mode zero1 only");
  expectError({"--mode", "zero1", "--first-bucket-bytes", "4194304"}, "--first-bucket-bytes applies to --mode ddp only");
  expectError({"--mode", "ddp", "--bucket-mb", "5", "--first-bucket-bytes", "4194304"},
              "--first-bucket-bytes applies only with --bucket-mb unset: DDP then cuts the first bucket at the cap too");
  expectError({"--mode", "ddp", "--bucket-size", "1000"}, "--bucket-size applies to --mode zero1 only (ddp takes --bucket-mb)");
  expectError({"--mode", "zero1", "--bucket-size", "1000", "--bucket-mb", "5"},
              "--bucket-size and --bucket-mb both set the buckets: give one");
  expectError({"--mode", "fsdp", "--overlap-param-gather"}, "--overlap-param-gather applies to --mode zero1 only");
  expectError({"--mode", "ddp", "--process-group-stream"}, "--process-group-stream applies to --mode zero1 only");
  expectError({"--mode", "zero1", "--gradient-as-bucket-view"}, "--gradient-as-bucket-view applies to --mode ddp only");
  expectError({"--mode", "zero1", "--fsdp-streams"}, "--fsdp-streams applies to --mode fsdp only");
  expectError({"--mode", "fsdp", "--forward-prefetch"}, "--forward-prefetch applies to --mode fsdp with --fsdp-streams");
  expectError({"--mode", "fsdp", "--limit-all-gathers", "false"},
              "--limit-all-gathers applies to --mode fsdp with --fsdp-streams");
  expectError({"--mode", "fsdp", "--fsdp-streams", "--backward-prefetch", "early"},
              "--backward-prefetch must be pre, post or none (got 'early')");
  expectError({"--config", "gpt-5"}, "unknown --config 'gpt-5'; known: gpt2-small, gpt2-small-8k, tiny");
  expectError({"--heads", "5"}, "must be a multiple of the heads");
  expectError({"--bootstrap", "slurm"}, "--bootstrap must be auto, mpi, env or single");
  expectError({"--iterations", "0"}, "--iterations");
  expectError({"--no-such-option"}, "no-such-option");
}

TEST(FrameworkOptions, HelpAndConfigList) {
  EXPECT_NE(parse({"--help"}).out.find("--mode"), std::string::npos);
  const ParseOutcome list = parse({"--list-configs"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find("gpt2-small-8k       16     768     12   8192     1024           16   120485376      196"),
            std::string::npos)
      << list.out;
}

TEST(FrameworkOpCounts, WhatAnIterationIssues) {
  const ModelConfig c = *findModelPreset("gpt2-small-8k");
  EXPECT_EQ(forwardKernels(16), 164);
  EXPECT_EQ(backwardKernels(16), 293);
  const ParamLayout layout(c);
  EXPECT_EQ(multiTensorLaunches(layout, 2), 7);  // 1966 chunks of 320 blocks at the most
  EXPECT_EQ(multiTensorLaunches(layout, 1), 7);
  constexpr std::size_t kCap = std::size_t{25} << 20;
  EXPECT_EQ(iterationOpCounts(c, SyncMode::Naive, {kCap}, 4), (OpCounts{164 + 293 + 7 + 7, 3, 0, 196}));
  ASSERT_EQ(modelBuckets(layout, {kCap}).size(), 17u);
  // ddp: each of the 196 gradients divided into its bucket (a kernel) and copied back.
  EXPECT_EQ(iterationOpCounts(c, SyncMode::Ddp, {kCap}, 4), (OpCounts{164 + 293 + 7 + 7 + 196, 3 + 196, 0, 17}));
  // gradient_as_bucket_view: backward writes into the buckets, the division is in place, nothing
  // is copied back.
  EXPECT_EQ(iterationOpCounts(c, SyncMode::Ddp, {kCap}, 4, true), (OpCounts{164 + 293 + 7 + 7 + 196, 3, 0, 17}));
  // zero1 on 4 ranks: the step covers a quarter of every bucket, the 17 shards in 2 launches of
  // at most 320 blocks; a reduce-scatter and an all-gather per bucket; no copies, the tensors
  // being views into the buckets.
  EXPECT_EQ(iterationOpCounts(c, SyncMode::Zero1, {kCap}, 4), (OpCounts{164 + 293 + 2 + 7, 3, 0, 34}));
  // fsdp on 4 ranks: 17 units (the root and 16 blocks), none padded; the step over their shards
  // in 2 launches; each unit gathered for forward and backward (the root once), its gradients
  // reduce-scattered, and gathered for the check: 33 + 17 + 17 collectives, whatever the cap.
  ASSERT_EQ(fsdpUnits(c, 4).size(), 17u);
  EXPECT_EQ(iterationOpCounts(c, SyncMode::Fsdp, {kCap}, 4), (OpCounts{164 + 293 + 2 + 7, 3, 0, 67}));
  EXPECT_EQ(iterationOpCounts(c, SyncMode::Fsdp, {kCap / 25}, 4), iterationOpCounts(c, SyncMode::Fsdp, {kCap}, 4));
  // On 5 ranks every unit's flat gradients have padding, zeroed before the reduce-scatter.
  EXPECT_EQ(iterationOpCounts(c, SyncMode::Fsdp, {kCap}, 5).memsets, 17);
}

TEST(FrameworkReport, LinesOthersParse) {
  RunSummary run;
  run.options.config = *findModelPreset("tiny");
  run.options.iterations = 2;
  run.ranks = 4;
  run.bootstrap = BootstrapKind::Mpi;
  run.params = 478720;
  run.param_tensors = 28;
  run.iterations = {{0, true, 90.0, 1}, {1, false, 60.0, 2}, {2, false, 62.0, 3}};
  EXPECT_EQ(configLine(run),
            "config name=tiny layers=2 hidden=128 heads=4 vocab=512 seq_len=128 micro_batch=2 params=478720 "
            "param_tensors=28 mode=naive bucket_mb=25 first_bucket_bytes=1048576 gradient_as_bucket_view=0 bucket_size=0 overlap_grad_reduce=0 overlap_param_gather=0 process_group_stream=0 "
            "fsdp_streams=0 backward_prefetch=pre forward_prefetch=0 limit_all_gathers=1 buckets=0 ranks=4 bootstrap=mpi lr=0.1 seed=1234 iterations=2 warmup=1");
  EXPECT_EQ(iterationLine(run.iterations[1]), "iter=1 phase=measured time_ms=60.000");
  EXPECT_EQ(countsLine(3, "iteration", OpCounts{10, 3, 1, 28}),
            "op_counts rank=3 scope=iteration kernels=10 memcpys=3 memsets=1 collectives=28");
  EXPECT_EQ(memoryLine(1, CachingAllocator::Stats{2, 512u << 20, 100u << 20, 300u << 20}),
            "memory rank=1 segments=2 segment_mib=512.0 peak_allocated_mib=300.0");
  EXPECT_EQ(summaryLine(run),
            "summary mode=naive ranks=4 iterations=2 mean_ms=61.000 median_ms=61.000 min_ms=60.000 max_ms=62.000 "
            "gradients=verified");
}

}  // namespace
}  // namespace framework_trainer
