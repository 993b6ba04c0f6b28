#include "dp_trainer/options.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace dp_trainer {
namespace {

ParseOutcome parse(const std::vector<const char*>& args) {
  std::vector<const char*> argv{"dp_trainer"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parseOptions(static_cast<int>(argv.size()), argv.data());
}

TEST(Options, Defaults) {
  const ParseOutcome p = parse({});
  ASSERT_TRUE(p.options);
  EXPECT_EQ(p.options->config.name, "gpt-1.3b");
  EXPECT_EQ(p.options->mode, SyncMode::Naive);
  EXPECT_EQ(p.options->shape.layers, 24);
  EXPECT_EQ(p.options->shape.width, 32);
  EXPECT_EQ(p.options->shape.batch, 8);
  EXPECT_DOUBLE_EQ(p.options->bucketBytes(), 25.0 * 1024 * 1024);
  EXPECT_EQ(p.options->totalIterations(), 11);
}

TEST(Options, ConfigAndOverrides) {
  const ParseOutcome p = parse({"--config", "gpt-125m", "--micro-batch", "32", "--layers", "3", "--mode", "overlap",
                                "--bucket-mb", "50", "--iterations", "4", "--warmup", "0", "--seed", "9"});
  ASSERT_TRUE(p.options) << p.err;
  EXPECT_EQ(p.options->config.hidden, 768);
  EXPECT_EQ(p.options->config.micro_batch, 32);
  EXPECT_EQ(p.options->config.layers, 3);
  EXPECT_EQ(p.options->shape.layers, 3);
  EXPECT_EQ(p.options->mode, SyncMode::Overlap);
  EXPECT_DOUBLE_EQ(p.options->bucket_mb, 50.0);
  EXPECT_EQ(p.options->totalIterations(), 4);
  EXPECT_EQ(p.options->seed, 9u);
}

void expectError(const std::vector<const char*>& args, const std::string& mentions) {
  const ParseOutcome p = parse(args);
  EXPECT_FALSE(p.options);
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_EQ(p.err.rfind("dp_trainer: ", 0), 0u) << p.err;
  EXPECT_NE(p.err.find(mentions), std::string::npos) << p.err;
}

TEST(Options, BadArgumentsAreErrorsWithAMessage) {
  expectError({"--mode", "fast"}, "--mode");
  expectError({"--config", "gpt-9t"}, "gpt-9t");
  expectError({"--config", "gpt-9t"}, "gpt-1.3b");  // lists the known ones
  expectError({"--iterations", "0"}, "--iterations");
  expectError({"--width", "5000"}, "--width");
  expectError({"--bucket-mb", "-1"}, "--bucket-mb");
  expectError({"--lr", "nan"}, "--lr");
  expectError({"--no-such-flag"}, "--no-such-flag");
  expectError({"--bootstrap", "slurm"}, "--bootstrap");
  expectError({"--micro-batch", "3000000"}, "tokens");
}

TEST(Options, FaultsAreOffByDefaultAndParsed) {
  const ParseOutcome none = parse({});
  ASSERT_TRUE(none.options);
  EXPECT_FALSE(none.options->faults.any());
  const ParseOutcome p = parse({"--stall-rank", "1", "--stall-at-step", "3", "--stall-ms", "2500", "--exit-rank", "2",
                                "--exit-at-step", "4", "--diverge-rank", "0", "--diverge-at-step", "5"});
  ASSERT_TRUE(p.options) << p.err;
  Faults expected;
  expected.stall_rank = 1;
  expected.stall_at_step = 3;
  expected.stall_ms = 2500;
  expected.exit_rank = 2;
  expected.exit_at_step = 4;
  expected.diverge_rank = 0;
  expected.diverge_at_step = 5;
  EXPECT_EQ(p.options->faults, expected);
  EXPECT_TRUE(p.options->faults.any());
  expectError({"--stall-ms", "-1"}, "--stall-ms");
  expectError({"--exit-rank", "-2"}, "--exit-rank");
  expectError({"--diverge-rank", "1", "--mode", "overlap"}, "--mode naive");
}

TEST(Options, HelpAndListExitZeroWithText) {
  const ParseOutcome help = parse({"--help"});
  EXPECT_FALSE(help.options);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--mode"), std::string::npos);
  EXPECT_NE(help.out.find("--stall-rank"), std::string::npos);
  EXPECT_NE(help.out.find("--exit-rank"), std::string::npos);
  EXPECT_NE(help.out.find("--diverge-rank"), std::string::npos);
  const ParseOutcome list = parse({"--list-configs"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find("gpt-6.7b"), std::string::npos);
}

TEST(Options, PredictNeedsAProfile) {
  ::unsetenv("SIMGPU_PROFILE");
  const ParseOutcome p = parse({"--predict"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("SIMGPU_PROFILE"), std::string::npos);
  ::setenv("SIMGPU_PROFILE", "some.json", 1);
  const ParseOutcome q = parse({"--predict"});
  ASSERT_TRUE(q.options);
  EXPECT_EQ(q.options->profile_path, "some.json");
  ::unsetenv("SIMGPU_PROFILE");
}

}  // namespace
}  // namespace dp_trainer
