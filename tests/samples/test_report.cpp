#include "dp_trainer/report.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>

namespace dp_trainer {
namespace {

RunSummary sampleRun() {
  RunSummary run;
  run.options.config = LlmConfig{"gpt-1.3b", 24, 2048, 2048, 2};
  run.options.shape = ModelShape{24, 32, 8};
  run.options.iterations = 3;
  run.options.warmup = 1;
  run.ranks = 4;
  run.buckets = 24;
  run.bootstrap = BootstrapKind::Mpi;
  run.iterations = {{0, true, 500.0, 1.5, 0x1}, {1, false, 140.0, 1.0, 0x2}, {2, false, 150.0, 0.8, 0x3},
                    {3, false, 130.0, 0.7, 0xabcdef0123456789ull}};
  run.per_iteration = OpCounts{96, 4, 1, 24};
  return run;
}

TEST(Report, LinesOthersParse) {
  const RunSummary run = sampleRun();
  EXPECT_EQ(iterationLine(run.iterations[0]), "iter=0 phase=warmup time_ms=500.000 loss=1.500000");
  EXPECT_EQ(checksumLine(run.iterations[3]), "grad_checksum iter=3 value=abcdef0123456789");
  EXPECT_EQ(checksumLine(run.iterations[1]), "grad_checksum iter=1 value=0000000000000002");
  EXPECT_EQ(countsLine(2, "iteration", run.per_iteration),
            "op_counts rank=2 scope=iteration kernels=96 memcpys=4 memsets=1 collectives=24");
  EXPECT_TRUE(std::regex_match(configLine(run), std::regex("config name=gpt-1\\.3b layers=24 .* mode=naive .*ranks=4 bootstrap=mpi .*")))
      << configLine(run);
  EXPECT_EQ(summaryLine(run),
            "summary mode=naive ranks=4 iterations=3 mean_ms=140.000 median_ms=140.000 min_ms=130.000 "
            "max_ms=150.000 loss_first=1.500000 loss_last=0.700000 gradients=verified");
}

TEST(Report, MeasuredTimesLeaveOutWarmup) {
  const TimeStats t = measuredTimes(sampleRun().iterations);
  EXPECT_DOUBLE_EQ(t.mean_ms, 140.0);
  EXPECT_DOUBLE_EQ(t.max_ms, 150.0);
  EXPECT_DOUBLE_EQ(measuredTimes({}).mean_ms, 0.0);
}

TEST(Report, JsonSummary) {
  const nlohmann::json j = summaryJson(sampleRun());
  EXPECT_EQ(j.at("mode"), "naive");
  EXPECT_EQ(j.at("iterations").size(), 4u);
  EXPECT_EQ(j.at("iterations")[3].at("grad_checksum"), "abcdef0123456789");
  EXPECT_EQ(j.at("op_counts").at("iteration").at("collectives"), 24);
  EXPECT_DOUBLE_EQ(j.at("measured").at("median_ms").get<double>(), 140.0);
}

}  // namespace
}  // namespace dp_trainer
