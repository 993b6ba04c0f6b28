// The collector as NCCL's profiler plugin (docs/collector.md, "NCCL's profiler plugin"):
// dp_trainer on 4 ranks under mpirun on simgpu, whose NCCL offers the plugin interface. Every
// collective row gets NCCL's own view of it (function, per-function seqNumber, algorithm,
// protocol, channels) and its kernel channel's GPU timer: the op's modelled GPU start and end;
// a job that set NCCL_PROFILER_PLUGIN itself keeps it, and then nothing of the plugin is stored.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/child_process.hpp"
#include "support/recorded_store.hpp"
#include "support/recording.hpp"
#include "syncopate/collector/record.hpp"

namespace collector_test {
namespace {

using syncopate::trace::CollType;
using syncopate::trace::OpKind;

constexpr int kRanks = 4;

// simgpu's default profile with the all-reduce algorithm replaced (ring or tree).
std::filesystem::path profileWithAlgorithm(const TempDir& dir, const std::string& algorithm) {
  std::ifstream in(sourceDir() / "simgpu" / "profiles" / "default.json");
  std::stringstream text;
  text << in.rdbuf();
  std::string profile = text.str();
  const std::string ring = R"("algorithm": "ring")";
  const auto at = profile.find(ring);
  if (at == std::string::npos) throw std::runtime_error("simgpu's default profile names no ring algorithm");
  profile.replace(at, ring.size(), R"("algorithm": ")" + algorithm + "\"");
  const auto path = dir.path() / ("profile-" + algorithm + ".json");
  std::ofstream(path) << profile;
  return path;
}

struct Job {
  ChildResult result;
  std::vector<RecordedStore> stores;
};

// dp_trainer (naive mode, CUPTI timing) recorded as `syncopate record` runs it under mpirun;
// `job_environment` is what the user's own environment adds.
Job recordTrainer(const TempDir& dir, const std::map<std::string, std::string>& job_environment,
                  std::vector<std::string>* warnings = nullptr) {
  syncopate::collector::RecordOptions options;
  options.output_dir = dir.path() / "run";
  options.backend = "cupti";
  options.preload_library = preloadLibrary();
  syncopate::collector::Environment current = syncopate::collector::currentEnvironment();
  for (const auto& [name, value] : job_environment) current[name] = value;
  std::vector<std::string> said;
  syncopate::collector::Environment changes = syncopate::collector::recordEnvironment(options, current, said);
  if (warnings != nullptr) *warnings = said;

  std::vector<std::string> argv = {COLLECTOR_TEST_MPIEXEC, "-np", std::to_string(kRanks)};
  for (const std::string& flag : splitFlags(COLLECTOR_TEST_MPIRUN_FLAGS)) argv.push_back(flag);
  argv.insert(argv.end(), {COLLECTOR_TEST_DP_TRAINER, "--mode", "naive", "--iterations", "2", "--warmup", "1"});
  argv = syncopate::collector::launcherCommand(argv, changes, current);
  std::map<std::string, std::string> environment(job_environment.begin(), job_environment.end());
  for (const auto& [name, value] : changes) environment[name] = value;
  std::filesystem::create_directories(options.output_dir);
  Job job;
  job.result = run(argv, environment, std::chrono::seconds(240));
  if (job.result.exit_code == 0) job.stores = readRun(options.output_dir);
  return job;
}

std::string ncclFunction(CollType type) {
  switch (type) {
    case CollType::AllReduce: return "AllReduce";
    case CollType::Broadcast: return "Broadcast";
    default: return "other";
  }
}

class NcclProfilerPlugin : public ::testing::TestWithParam<std::string> {};

TEST_P(NcclProfilerPlugin, EveryCollectiveHasNcclsViewAndKernelTiming) {
  const std::string algorithm = GetParam();
  TempDir dir;
  std::vector<std::string> warnings;
  Job job = recordTrainer(dir, {{"SIMGPU_PROFILE", profileWithAlgorithm(dir, algorithm).string()}}, &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ASSERT_EQ(job.result.exit_code, 0) << job.result.err;
  ASSERT_EQ(job.stores.size(), static_cast<std::size_t>(kRanks));
  for (const RecordedStore& store : job.stores) {
    SCOPED_TRACE("rank " + std::to_string(store.rank));
    EXPECT_EQ(store.meta.at("nccl_profiler"), "loaded");
    EXPECT_EQ(store.counter("nccl_profiler_events_unjoined"), 0);
    ASSERT_FALSE(store.collectives.empty());
    // Exactly one NCCL view and one kernel channel per collective row, and nothing else.
    ASSERT_EQ(store.nccl_ops.size(), store.collectives.size());
    ASSERT_EQ(store.nccl_kernel_channels.size(), store.collectives.size());

    std::map<std::int64_t, const RecordedStore::NcclOp*> nccl_by_correlation;
    for (const auto& op : store.nccl_ops) nccl_by_correlation[op.row.correlation_id] = &op;
    std::map<std::int64_t, const syncopate::trace::NcclKernelChannelRow*> channel_by_correlation;
    for (const auto& channel : store.nccl_kernel_channels) channel_by_correlation[channel.correlation_id] = &channel;
    std::map<std::int64_t, const Op*> op_by_correlation;
    for (const Op* op : store.opsOf(OpKind::Collective)) op_by_correlation[*op->row.correlation_id] = op;

    // Collectives in the interposer's per-communicator order; NCCL counts per function.
    std::vector<syncopate::trace::CollectiveRow> collectives = store.collectives;
    std::sort(collectives.begin(), collectives.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
    std::map<std::string, std::uint64_t> next_nccl_seq;
    for (const auto& row : collectives) {
      SCOPED_TRACE("seq " + std::to_string(row.seq));
      const auto nccl = nccl_by_correlation.find(row.correlation_id);
      ASSERT_NE(nccl, nccl_by_correlation.end()) << "NCCL's view of the collective";
      const std::string func = ncclFunction(row.coll_type);
      EXPECT_EQ(nccl->second->func, func);
      EXPECT_EQ(nccl->second->row.nccl_seq, next_nccl_seq[func]++);
      const bool tree = algorithm == "tree" && row.coll_type == CollType::AllReduce;
      EXPECT_EQ(nccl->second->algorithm, tree ? "TREE" : "RING");
      EXPECT_EQ(nccl->second->protocol, "LL");
      EXPECT_EQ(nccl->second->row.channels, 1u);

      const auto channel = channel_by_correlation.find(row.correlation_id);
      ASSERT_NE(channel, channel_by_correlation.end()) << "the kernel channel's timing";
      EXPECT_EQ(channel->second->channel, 0u);
      const auto op = op_by_correlation.find(row.correlation_id);
      ASSERT_NE(op, op_by_correlation.end());
      // simgpu's GPU timer is the op's modelled start and end on CLOCK_MONOTONIC, what CUPTI's
      // activity holds too: the same duration to the nanosecond; the same start within the
      // error of the clock offset simgpu's CUPTI measures (two clock readings) when it
      // converts to the collector's timestamp callback (1 µs, as in the other CUPTI tests).
      ASSERT_TRUE(channel->second->start_timer && channel->second->end_timer);
      const auto start = static_cast<std::int64_t>(*channel->second->start_timer);
      const auto end = static_cast<std::int64_t>(*channel->second->end_timer);
      EXPECT_EQ(end - start, op->second->row.end_ns - op->second->row.start_ns);
      EXPECT_NEAR(static_cast<double>(start), static_cast<double>(op->second->row.start_ns), 1'000.0);
    }
    EXPECT_EQ(next_nccl_seq["Broadcast"], 1u);
    EXPECT_GE(next_nccl_seq["AllReduce"], 2u);
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, NcclProfilerPlugin, ::testing::Values("ring", "tree"));

// A job that chose its own profiler plugin keeps it: `record` says so and does not touch the
// variable, and the stores hold the interposed collectives but nothing of NCCL's plugin.
TEST(NcclProfilerPluginOfTheJob, IsLeftAlone) {
  TempDir dir;
  std::vector<std::string> warnings;
  Job job = recordTrainer(dir, {{"NCCL_PROFILER_PLUGIN", "none"}}, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings.front().find("NCCL_PROFILER_PLUGIN already names none"), std::string::npos) << warnings.front();
  ASSERT_EQ(job.result.exit_code, 0) << job.result.err;
  ASSERT_EQ(job.stores.size(), static_cast<std::size_t>(kRanks));
  for (const RecordedStore& store : job.stores) {
    EXPECT_EQ(store.meta.at("nccl_profiler"), "not loaded");
    EXPECT_FALSE(store.collectives.empty());
    EXPECT_TRUE(store.nccl_ops.empty());
    EXPECT_TRUE(store.nccl_kernel_channels.empty());
  }
}

}  // namespace
}  // namespace collector_test
