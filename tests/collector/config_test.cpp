// What the preload library reads from its environment: the recorder's configuration and the
// process's place in the job.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "syncopate/collector/recorder_config.hpp"
#include "syncopate/collector/process_identity.hpp"

namespace collector_test {
namespace {

using namespace syncopate::preload;

std::map<std::string, std::string>* variables = nullptr;

const char* lookup(const char* name) {
  auto found = variables->find(name);
  return found == variables->end() ? nullptr : found->second.c_str();
}

TEST(RecorderConfig, OffWithoutAnOutputDirectory) {
  std::map<std::string, std::string> env{{"SYNCOPATE_BACKEND", "events"}};
  variables = &env;
  EXPECT_FALSE(parseRecorderConfig(lookup).enabled);
}

TEST(RecorderConfig, ReadsEverySetting) {
  std::map<std::string, std::string> env{{"SYNCOPATE_OUTPUT_DIR", "/runs/a"}, {"SYNCOPATE_ARMED", "1"},
                                         {"SYNCOPATE_BACKEND", "cupti"}, {"SYNCOPATE_ITERATION_MARKER", "step"},
                                         {"SYNCOPATE_BUFFER_RECORDS", "4096"}, {"SYNCOPATE_FLUSH_MS", "20"},
                                         {"SYNCOPATE_HOST_CLOCK", "system"}};
  variables = &env;
  RecorderConfig config = parseRecorderConfig(lookup);
  EXPECT_TRUE(config.enabled);
  EXPECT_EQ(config.output_dir, "/runs/a");
  EXPECT_TRUE(config.armed);
  EXPECT_EQ(config.backend, BackendChoice::Cupti);
  EXPECT_EQ(config.iteration_marker, "step");
  EXPECT_EQ(config.ring_records, 4096u);
  EXPECT_EQ(config.flush_interval_ms, 20u);
  EXPECT_EQ(config.host_clock, HostClockChoice::System);
  EXPECT_TRUE(config.problem.empty());
}

TEST(RecorderConfig, TheTscCanBeAskedForWhateverTheKernelsClock) {
  std::map<std::string, std::string> env{{"SYNCOPATE_OUTPUT_DIR", "/runs/a"}, {"SYNCOPATE_HOST_CLOCK", "tsc"}};
  variables = &env;
  RecorderConfig config = parseRecorderConfig(lookup);
  EXPECT_EQ(config.host_clock, HostClockChoice::Tsc);
  EXPECT_TRUE(config.problem.empty()) << config.problem;
}

TEST(RecorderConfig, BadValuesAreCorrectedWithASentence) {
  std::map<std::string, std::string> env{{"SYNCOPATE_OUTPUT_DIR", "/runs/a"}, {"SYNCOPATE_BACKEND", "gpu"},
                                         {"SYNCOPATE_FLUSH_MS", "500"}, {"SYNCOPATE_BUFFER_RECORDS", "lots"},
                                         {"SYNCOPATE_HOST_CLOCK", "hpet"}};
  variables = &env;
  RecorderConfig config = parseRecorderConfig(lookup);
  EXPECT_EQ(config.backend, BackendChoice::Auto);
  EXPECT_EQ(config.flush_interval_ms, 100u) << "a flush at least every 100 ms, whatever is asked";
  EXPECT_EQ(config.ring_records, 1u << 17) << "the default";
  EXPECT_EQ(config.host_clock, HostClockChoice::Auto) << "an unknown clock leaves the choice to the recorder";
  EXPECT_NE(config.problem.find("SYNCOPATE_HOST_CLOCK=hpet is not auto, system or tsc"), std::string::npos) << config.problem;
  EXPECT_NE(config.problem.find("SYNCOPATE_BACKEND=gpu"), std::string::npos) << config.problem;
  EXPECT_NE(config.problem.find("SYNCOPATE_FLUSH_MS=500"), std::string::npos) << config.problem;
  EXPECT_NE(config.problem.find("SYNCOPATE_BUFFER_RECORDS=lots"), std::string::npos) << config.problem;
}

TEST(ProcessIdentity, RankFromTheLaunchersEnvironment) {
  std::map<std::string, std::string> env{{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                         {"OMPI_COMM_WORLD_SIZE", "8"}};
  variables = &env;
  ProcessIdentity identity = readProcessIdentity(lookup, true);
  EXPECT_EQ(identity.rank, 5);
  EXPECT_EQ(identity.local_rank, 1);
  EXPECT_EQ(identity.world_size, 8);
  EXPECT_EQ(identity.rank_source, "OMPI_COMM_WORLD_RANK");
  EXPECT_FALSE(identity.host.empty());
  EXPECT_NE(identity.command.find("collector_unit_test"), std::string::npos);

  // torchrun's RANK wins over the launcher that started torchrun (one per node).
  env = {{"SLURM_PROCID", "1"}, {"RANK", "9"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "16"}};
  identity = readProcessIdentity(lookup, true);
  EXPECT_EQ(identity.rank, 9);
  EXPECT_EQ(identity.rank_source, "RANK");
  env = {{"PMI_RANK", "2"}};
  EXPECT_EQ(readProcessIdentity(lookup, true).rank, 2);
  env = {{"SLURM_PROCID", "3"}};
  EXPECT_EQ(readProcessIdentity(lookup, true).rank, 3);
  env = {{"RANK", "not-a-number"}};
  EXPECT_FALSE(readProcessIdentity(lookup, true).rank);
  // A forked child inherits its parent's variables, not its rank.
  env = {{"RANK", "4"}};
  EXPECT_FALSE(readProcessIdentity(lookup, false).rank);
}

TEST(ProcessIdentity, CudaDeviceMaxConnectionsAsTheEnvironmentGivesIt) {
  std::map<std::string, std::string> env{{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}};
  variables = &env;
  EXPECT_EQ(readProcessIdentity(lookup, true).cuda_device_max_connections, "1");
  // A forked child runs with its parent's environment, so with its work queues too.
  EXPECT_EQ(readProcessIdentity(lookup, false).cuda_device_max_connections, "1");
  env = {};
  EXPECT_EQ(readProcessIdentity(lookup, true).cuda_device_max_connections, "");
}

}  // namespace
}  // namespace collector_test
