// framework_trainer end to end on simgpu, at the tiny configuration: 4 ranks under mpirun in
// every synchronisation mode with every iteration's gradients (zero1, fsdp: updated parameters)
// checked by the program itself (probes against the host's mirror, checksums across ranks),
// bit-identical results across modes and bucket caps, the op counts of
// docs/framework_trainer.md, the torchrun-style launch, NVTX's ProfilerStep#N ranges, and
// errors for bad arguments.
#include "trainer_runs.hpp"

#include "framework_trainer/ddp_buckets.hpp"
#include "framework_trainer/fsdp_units.hpp"
#include "framework_trainer/model_config.hpp"
#include "framework_trainer/op_counts.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <fstream>
#include <string>
#include <vector>

namespace framework_trainer {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;
using namespace sample_testing;

const std::string kTrainer = FRAMEWORK_TRAINER_BINARY;
const std::string kProfile = std::string(FRAMEWORK_TRAINER_PROFILES) + "/h100-4-hosts-400g.json";

// 1 warm-up and 2 measured iterations of the tiny configuration, the same in every run so that
// checksums line up.
std::vector<std::string> tiny(std::vector<std::string> args) {
  for (const char* a : {"--config", "tiny", "--iterations", "2", "--warmup", "1"}) args.emplace_back(a);
  return args;
}
constexpr int kTotalIterations = 3;

TrainerRun runMpi(int ranks, const std::vector<std::string>& args) {
  return runUnderMpirun(kTrainer, ranks, args, kProfile);
}

constexpr std::size_t kHalfMiB = std::size_t{1} << 19;
constexpr std::size_t kDefaultCap = std::size_t{25} << 20;

// What every rank says one iteration issued, against the formulas of op_counts.hpp.
void expectIterationCounts(const TrainerRun& run, SyncMode mode, const BucketSizing& buckets,
                           bool gradient_as_bucket_view = false) {
  const OpCounts expected = iterationOpCounts(*findModelPreset("tiny"), mode, buckets, 4, gradient_as_bucket_view);
  int seen = 0;
  for (const Fields& c : run.counts) {
    if (c.at("scope") != "iteration") continue;
    ++seen;
    EXPECT_EQ(c.at("kernels"), std::to_string(expected.kernels));
    EXPECT_EQ(c.at("memcpys"), std::to_string(expected.memcpys));
    EXPECT_EQ(c.at("memsets"), std::to_string(expected.memsets));
    EXPECT_EQ(c.at("collectives"), std::to_string(expected.collectives));
  }
  EXPECT_EQ(seen, 4);
}

// The naive run on 4 ranks is the baseline of several tests: run it once.
const TrainerRun& naive() {
  static const TrainerRun run = runMpi(4, tiny({"--mode", "naive"}));
  return run;
}

TEST(FrameworkTrainerOnSimgpu, NaiveOnFourRanksVerifiesEveryIteration) {
  const TrainerRun& run = naive();
  expectVerified(run, 4, kTotalIterations);
  EXPECT_EQ(run.config.at("mode"), "naive");
  EXPECT_EQ(run.config.at("bootstrap"), "mpi");
  const ParamLayout layout(*findModelPreset("tiny"));
  EXPECT_EQ(run.config.at("params"), std::to_string(layout.totalNumel()));
  EXPECT_EQ(run.config.at("param_tensors"), std::to_string(layout.size()));
  // One all-reduce per parameter tensor.
  expectIterationCounts(run, SyncMode::Naive, {kDefaultCap});
  // The caching allocator keeps blocks per stream, as PyTorch's does: one 256 MiB segment for
  // the compute stream's tensors and one for the check's.
  ASSERT_EQ(run.memory.size(), 4u);
  for (const Fields& m : run.memory) {
    EXPECT_EQ(m.at("segments"), "2");
    EXPECT_EQ(m.at("segment_mib"), "512.0");
  }
}

TEST(FrameworkTrainerOnSimgpu, DdpBucketsGiveBitIdenticalGradients) {
  // 0.5 MiB buckets of the 1.9 MB of tiny's gradients, the first one too (bucket_cap_mb given):
  // DDP's buckets as assignBuckets makes them.
  const ParamLayout layout(*findModelPreset("tiny"));
  const BucketSizing half{kHalfMiB, 0, kHalfMiB};
  const std::size_t buckets = modelBuckets(layout, half).size();
  ASSERT_GT(buckets, 1u);

  const TrainerRun ddp = runMpi(4, tiny({"--mode", "ddp", "--bucket-mb", "0.5"}));
  expectVerified(ddp, 4, kTotalIterations);
  EXPECT_EQ(ddp.config.at("buckets"), std::to_string(buckets));
  EXPECT_EQ(ddp.config.at("first_bucket_bytes"), std::to_string(kHalfMiB));
  expectIterationCounts(ddp, SyncMode::Ddp, half);
  ASSERT_EQ(naive().result.exit_code, 0);
  EXPECT_EQ(ddp.checksums, naive().checksums);

  // gradient_as_bucket_view=True: backward writes the same buckets, averaged in place and read
  // there by the step, with no copy either way; the same gradients again.
  const TrainerRun views = runMpi(4, tiny({"--mode", "ddp", "--bucket-mb", "0.5", "--gradient-as-bucket-view"}));
  expectVerified(views, 4, kTotalIterations);
  EXPECT_EQ(views.config.at("gradient_as_bucket_view"), "1");
  EXPECT_EQ(views.config.at("buckets"), std::to_string(buckets));
  expectIterationCounts(views, SyncMode::Ddp, half, true);
  EXPECT_EQ(views.checksums, naive().checksums);

  // DDP's default caps: the first bucket closes at 1 MiB, the rest fits in one 25 MiB bucket;
  // the same gradients again.
  ASSERT_EQ(modelBuckets(layout, {kDefaultCap}).size(), 2u);
  const TrainerRun default_caps = runMpi(4, tiny({"--mode", "ddp"}));
  expectVerified(default_caps, 4, kTotalIterations);
  EXPECT_EQ(default_caps.config.at("buckets"), "2");
  EXPECT_EQ(default_caps.checksums, naive().checksums);
}

// zero1: each rank steps a quarter of every bucket and gathers the rest; every rank's updated
// parameters match the host's mirror stepped with the average gradient, and each other's. The
// buckets' bounds cannot change an element's average or its step: the same parameters, to the
// bit, with 0.5 MiB buckets and DDP's default caps, and with the reduce-scatters overlapping
// backward, the all-gathers overlapping forward, or both.
TEST(FrameworkTrainerOnSimgpu, Zero1StepsShardsAndEveryRankHoldsTheSameParameters) {
  const ParamLayout layout(*findModelPreset("tiny"));
  const std::size_t buckets = modelBuckets(layout, {kHalfMiB}).size();
  ASSERT_GT(buckets, 1u);
  const TrainerRun small = runMpi(4, tiny({"--mode", "zero1", "--bucket-mb", "0.5"}));
  expectVerified(small, 4, kTotalIterations);
  EXPECT_EQ(small.config.at("mode"), "zero1");
  EXPECT_EQ(small.config.at("buckets"), std::to_string(buckets));
  expectIterationCounts(small, SyncMode::Zero1, {kHalfMiB});
  // The flat gradient and parameter buckets, padding zeroed once at set-up.
  for (const Fields& c : small.counts) {
    if (c.at("scope") != "setup") continue;
    EXPECT_EQ(c.at("memsets"), std::to_string(2 * buckets));
  }
  // The model's parameters and gradients are views into those buckets, not tensors beside them:
  // as much memory at peak as naive mode's separate tensors.
  ASSERT_EQ(small.memory.size(), 4u);
  ASSERT_FALSE(naive().memory.empty());
  for (const Fields& m : small.memory) {
    EXPECT_EQ(m.at("peak_allocated_mib"), naive().memory.front().at("peak_allocated_mib"));
  }

  const TrainerRun default_caps = runMpi(4, tiny({"--mode", "zero1"}));
  expectVerified(default_caps, 4, kTotalIterations);
  EXPECT_EQ(default_caps.config.at("buckets"), "2");
  EXPECT_EQ(default_caps.checksums, small.checksums);

  // Each bucket's reduce-scatter on its own stream as backward finishes the bucket, each
  // bucket's all-gather on it after the step with forward waiting for it, or both, or the
  // all-gathers through the process group's stream as synchronous collectives: the same calls,
  // the same parameters to the bit.
  const std::vector<std::vector<const char*>> overlaps = {{"--overlap-grad-reduce"},
                                                          {"--overlap-param-gather"},
                                                          {"--overlap-grad-reduce", "--overlap-param-gather"},
                                                          {"--process-group-stream", "--overlap-grad-reduce"}};
  for (const std::vector<const char*>& flags : overlaps) {
    std::vector<std::string> args = {"--mode", "zero1", "--bucket-mb", "0.5"};
    args.insert(args.end(), flags.begin(), flags.end());
    const TrainerRun overlapped = runMpi(4, tiny(args));
    expectVerified(overlapped, 4, kTotalIterations);
    expectIterationCounts(overlapped, SyncMode::Zero1, {kHalfMiB});
    const auto given = [&](const char* flag) {
      return std::find_if(flags.begin(), flags.end(), [&](const char* f) { return std::string(f) == flag; }) !=
                     flags.end()
                 ? "1"
                 : "0";
    };
    EXPECT_EQ(overlapped.config.at("overlap_grad_reduce"), given("--overlap-grad-reduce"));
    EXPECT_EQ(overlapped.config.at("overlap_param_gather"), given("--overlap-param-gather"));
    EXPECT_EQ(overlapped.config.at("process_group_stream"), given("--process-group-stream"));
    EXPECT_EQ(overlapped.checksums, small.checksums);
  }
}

// fsdp: each rank keeps a quarter of every unit's parameters, gathers each unit for its forward
// and its backward and reduce-scatters its gradients; the check gathers the updated parameters:
// they are the host's mirror stepped with the average gradient, the same on every rank, and the
// same to the bit as zero1's, which steps the same SGD on the same averaged gradients from the
// same weights. On 3 ranks the blocks' flat buffers have padding: the same again.
TEST(FrameworkTrainerOnSimgpu, FsdpShardsEveryUnitAndStepsTheSameParametersAsZero1) {
  const ModelConfig tiny_config = *findModelPreset("tiny");
  const TrainerRun fsdp = runMpi(4, tiny({"--mode", "fsdp"}));
  expectVerified(fsdp, 4, kTotalIterations);
  EXPECT_EQ(fsdp.config.at("mode"), "fsdp");
  EXPECT_EQ(fsdp.config.at("buckets"), std::to_string(fsdpUnits(tiny_config, 4).size()));
  expectIterationCounts(fsdp, SyncMode::Fsdp, {kDefaultCap});
  const TrainerRun zero1 = runMpi(4, tiny({"--mode", "zero1"}));
  expectVerified(zero1, 4, kTotalIterations);
  EXPECT_EQ(fsdp.checksums, zero1.checksums);

  ASSERT_EQ(paddedUnits(fsdpUnits(tiny_config, 3)), tiny_config.layers);
  const TrainerRun padded = runMpi(3, tiny({"--mode", "fsdp"}));
  expectVerified(padded, 3, kTotalIterations);
  for (const Fields& c : padded.counts) {
    if (c.at("scope") == "iteration") {
      EXPECT_EQ(c.at("memsets"), std::to_string(tiny_config.layers));
    }
  }
  const TrainerRun zero1_on_three = runMpi(3, tiny({"--mode", "zero1"}));
  expectVerified(zero1_on_three, 3, kTotalIterations);
  EXPECT_EQ(padded.checksums, zero1_on_three.checksums);
}

// fsdp as PyTorch FSDP issues it (--fsdp-streams): all-gathers on an unshard stream,
// reduce-scatters on a post-backward stream, with each of FSDP's prefetch settings and without
// its rate limiter. The same operations, and the same parameters to the bit as the one-stream
// version's: the events between the streams and record_stream's frees leave no buffer read
// before it is written or rewritten while it is read.
TEST(FrameworkTrainerOnSimgpu, FsdpOnItsOwnStreamsStepsTheSameParametersWithEverySetting) {
  const TrainerRun one_stream = runMpi(4, tiny({"--mode", "fsdp"}));
  expectVerified(one_stream, 4, kTotalIterations);
  const std::vector<std::vector<std::string>> settings = {
      {},
      {"--backward-prefetch", "none", "--limit-all-gathers", "false"},
      {"--backward-prefetch", "post", "--forward-prefetch"},
  };
  for (const std::vector<std::string>& setting : settings) {
    std::vector<std::string> args = {"--mode", "fsdp", "--fsdp-streams"};
    args.insert(args.end(), setting.begin(), setting.end());
    const TrainerRun run = runMpi(4, tiny(args));
    std::string named;
    for (const std::string& a : args) named += a + " ";
    SCOPED_TRACE(named);
    expectVerified(run, 4, kTotalIterations);
    EXPECT_EQ(run.config.at("fsdp_streams"), "1");
    EXPECT_EQ(run.config.at("backward_prefetch"), setting.size() > 1 ? setting[1] : "pre");
    expectIterationCounts(run, SyncMode::Fsdp, {kDefaultCap});
    EXPECT_EQ(run.checksums, one_stream.checksums);
  }
}

TEST(FrameworkTrainerLaunch, TorchrunStyleEnvironmentMatchesMpirun) {
  const std::vector<std::string> args = tiny({"--mode", "ddp"});
  expectTorchrunMatchesMpirun(kTrainer, args, kProfile, kTotalIterations);
}

// The ranges the NVTX injection library recorded, one "push NAME" or "pop" a line, on the main
// thread (backward's thread pushes none).
std::vector<std::string> readLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(FrameworkTrainerLaunch, NvtxMarksEveryProfilerStepAndItsPhases) {
  for (const char* mode : {"naive", "ddp", "zero1", "fsdp"}) {
    SCOPED_TRACE(mode);
    const std::string path = ::testing::TempDir() + "framework_trainer_nvtx_" + mode + ".txt";
    ChildSpec spec;
    spec.argv = {kTrainer, "--mode", mode};
    for (const std::string& a : tiny({})) spec.argv.push_back(a);
    spec.env = simgpuEnvironment(kProfile);
    spec.env.push_back("NVTX_INJECTION64_PATH="s + FRAMEWORK_TRAINER_NVTX_RECORDER);
    spec.env.push_back("NVTX_RECORDER_OUT=" + path);
    const TrainerRun run = readRun(runChild(spec, kTrainerTimeout));
    ASSERT_EQ(run.result.exit_code, 0) << describe(run);

    std::vector<std::string> expected;
    for (int n = 0; n < kTotalIterations; ++n) {
      expected.push_back("push ProfilerStep#" + std::to_string(n));
      for (const char* phase : {"forward", "backward"}) {
        expected.push_back("push "s + phase);
        expected.push_back("pop");
      }
      // ddp's and fsdp's gradients are synchronised during backward.
      if (std::string(mode) != "ddp" && std::string(mode) != "fsdp") {
        expected.push_back("push gradient_sync");
        expected.push_back("pop");
      }
      expected.push_back("push optimizer");
      expected.push_back("pop");
      if (std::string(mode) == "zero1") {
        expected.push_back("push parameter_gather");
        expected.push_back("pop");
      }
      expected.push_back("pop");
    }
    EXPECT_EQ(readLines(path), expected);
  }
}

TEST(FrameworkTrainerLaunch, BadArgumentsExitNonZeroWithAMessage) {
  const ChildResult mode = runChild({{kTrainer, "--mode", "zero3"}, {}}, 30s);
  EXPECT_EQ(mode.exit_code, 2);
  EXPECT_NE(mode.err.find("framework_trainer: --mode must be naive, ddp, zero1 or fsdp (got 'zero3')"),
            std::string::npos)
      << mode.err;
  expectUnknownConfigAndIncompleteLaunchRefused(kTrainer);
}

}  // namespace
}  // namespace framework_trainer
