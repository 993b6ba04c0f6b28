// The sample trainer on 4 ranks under mpirun, recorded in both gradient synchronisation modes
// with both timing backends: every rank's store holds exactly the kernels, copies, fills and
// collectives the rank reports having issued; collective rows carry the communicator,
// sequence number, operation, type and size and match across ranks; the kernels take
// simgpu's modelled time; NVTX phases and steps are there.
#include <gtest/gtest.h>

#include <signal.h>

#include <set>
#include <thread>
#include <tuple>

#include "dp_trainer/machine_profile.hpp"
#include "dp_trainer/options.hpp"
#include "dp_trainer/step_prediction.hpp"
#include "support/child_process.hpp"
#include "support/recorded_store.hpp"
#include "support/recording.hpp"
#include "syncopate/collector/record.hpp"
#include "syncopate/trace/reader.hpp"

namespace collector_test {
namespace {

using syncopate::trace::CollType;
using syncopate::trace::OpKind;

constexpr int kRanks = 4;
const std::vector<std::string> kTrainerOptions = {"--iterations", "3", "--warmup", "1"};

struct TrainerRun {
  ChildResult result;
  std::vector<RecordedStore> stores;
};

// The trainer under mpirun as `syncopate record` runs it: the recording environment, and mpirun
// told to forward it (-x) as it would to ranks on other nodes.
struct TrainerLaunch {
  std::vector<std::string> argv;
  std::map<std::string, std::string> environment;
};

TrainerLaunch trainerLaunch(const TempDir& dir, const std::string& mode, const std::string& backend,
                            const std::vector<std::string>& options) {
  TrainerLaunch launch;
  launch.argv = {COLLECTOR_TEST_MPIEXEC, "-np", std::to_string(kRanks)};
  for (const std::string& flag : splitFlags(COLLECTOR_TEST_MPIRUN_FLAGS)) launch.argv.push_back(flag);
  launch.argv.insert(launch.argv.end(), {COLLECTOR_TEST_DP_TRAINER, "--mode", mode});
  launch.argv.insert(launch.argv.end(), options.begin(), options.end());
  launch.environment = recordingEnvironment({dir.path(), backend});
  syncopate::collector::Environment changes(launch.environment.begin(), launch.environment.end());
  launch.argv = syncopate::collector::launcherCommand(launch.argv, changes, syncopate::collector::currentEnvironment());
  return launch;
}

TrainerRun recordTrainer(const TempDir& dir, const std::string& mode, const std::string& backend) {
  TrainerLaunch launch = trainerLaunch(dir, mode, backend, kTrainerOptions);
  EXPECT_EQ(launch.argv[1], "-x") << "Open MPI's mpirun forwards the recording's variables";
  TrainerRun run_result;
  run_result.result = run(launch.argv, launch.environment, std::chrono::seconds(240));
  if (run_result.result.exit_code == 0) run_result.stores = readRun(dir.path());
  return run_result;
}

class TrainerRecording : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(TrainerRecording, EveryRankRecordsWhatItIssuedAndCollectivesMatch) {
  const auto& [mode, backend] = GetParam();
  TempDir dir;
  TrainerRun trained = recordTrainer(dir, mode, backend);
  ASSERT_EQ(trained.result.exit_code, 0) << trained.result.err;
  ASSERT_EQ(trained.stores.size(), static_cast<std::size_t>(kRanks));

  // (comm, seq) -> the collective rows of every rank.
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<syncopate::trace::CollectiveRow>> by_call;
  for (int rank = 0; rank < kRanks; ++rank) {
    const RecordedStore& store = trained.stores[static_cast<std::size_t>(rank)];
    SCOPED_TRACE("rank " + std::to_string(rank));
    ASSERT_EQ(store.rank, rank);
    EXPECT_EQ(store.meta.at("backend"), backend);
    auto counts = keyValues(trained.result.out, "op_counts rank=" + std::to_string(rank) + " scope=total ");
    ASSERT_FALSE(counts.empty()) << trained.result.out;
    EXPECT_EQ(store.count(OpKind::Kernel), std::stoi(counts.at("kernels")));
    EXPECT_EQ(store.count(OpKind::Memcpy), std::stoi(counts.at("memcpys")));
    EXPECT_EQ(store.count(OpKind::Memset), std::stoi(counts.at("memsets")));
    EXPECT_EQ(store.count(OpKind::Collective) + store.count(OpKind::P2P), std::stoi(counts.at("collectives")));
    EXPECT_EQ(static_cast<int>(store.collectives.size()), std::stoi(counts.at("collectives")));
    EXPECT_EQ(store.counter("records_dropped_buffer_full"), 0);
    EXPECT_EQ(store.counter("ops_untimed_timing_failed"), 0);
    EXPECT_EQ(store.counter("ops_untimed_no_timing_slot"), 0);

    ASSERT_EQ(store.communicators.size(), 1u);
    EXPECT_EQ(store.communicators.front().comm_rank, rank);
    EXPECT_EQ(store.communicators.front().comm_size, kRanks);
    std::set<std::uint64_t> seqs;
    for (const auto& row : store.collectives) {
      by_call[{row.comm_id, row.seq}].push_back(row);
      seqs.insert(row.seq);
      EXPECT_EQ(row.comm_rank, rank);
    }
    // Sequence numbers 0..n-1, each once.
    ASSERT_FALSE(seqs.empty());
    EXPECT_EQ(*seqs.begin(), 0u);
    EXPECT_EQ(*seqs.rbegin(), seqs.size() - 1);
    EXPECT_EQ(seqs.size(), store.collectives.size());

    // Steps and phases.
    std::map<std::string, int> ranges;
    for (const NvtxRange& range : store.nvtx) ++ranges[range.name.starts_with("ProfilerStep#") ? "step" : range.name];
    EXPECT_EQ(ranges["step"], 4);
    EXPECT_GE(ranges["forward"], 4);
    EXPECT_GE(ranges["backward"], 4);
    EXPECT_GE(ranges["gradient_sync"], 4);
    EXPECT_GE(ranges["optimizer"], 4);
  }
  for (const auto& [call, rows] : by_call) {
    SCOPED_TRACE("seq " + std::to_string(call.second));
    ASSERT_EQ(rows.size(), static_cast<std::size_t>(kRanks)) << "every rank took part in every collective";
    for (const auto& row : rows) {
      EXPECT_EQ(row.coll_type, rows.front().coll_type);
      EXPECT_EQ(row.dtype, rows.front().dtype);
      EXPECT_EQ(row.red_op, rows.front().red_op);
      EXPECT_EQ(row.count, rows.front().count);
      EXPECT_EQ(row.bytes, rows.front().bytes);
      EXPECT_EQ(row.root_or_peer, rows.front().root_or_peer);
      EXPECT_EQ(row.comm_size, kRanks);
    }
    // The setup's broadcast from rank 0 first, then the gradients' all-reduces (avg, float32).
    if (call.second == 0) {
      EXPECT_EQ(rows.front().coll_type, CollType::Broadcast);
      EXPECT_EQ(rows.front().root_or_peer, 0);
    } else {
      EXPECT_EQ(rows.front().coll_type, CollType::AllReduce);
      EXPECT_EQ(rows.front().red_op, syncopate::trace::RedOp::Avg);
      EXPECT_EQ(rows.front().dtype, syncopate::trace::DataType::Float32);
      EXPECT_EQ(*rows.front().bytes, *rows.front().count * 4);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ModesAndBackends, TrainerRecording,
                         ::testing::Combine(::testing::Values("naive", "overlap"), ::testing::Values("events", "cupti")),
                         [](const auto& test) { return std::get<0>(test.param) + "_" + std::get<1>(test.param); });

// In naive mode nothing overlaps (one stream), so no interference stretches a kernel: with
// CUPTI every kernel takes exactly the time dp_trainer's own prediction gives for the profile.
TEST(TrainerRecording, KernelDurationsAreSimgpusModel) {
  TempDir dir;
  TrainerRun trained = recordTrainer(dir, "naive", "cupti");
  ASSERT_EQ(trained.result.exit_code, 0) << trained.result.err;
  std::vector<const char*> argv = {"dp_trainer", "--mode", "naive"};
  for (const std::string& option : kTrainerOptions) argv.push_back(option.c_str());
  auto parsed = dp_trainer::parseOptions(static_cast<int>(argv.size()), argv.data());
  ASSERT_TRUE(parsed.options) << parsed.err;
  auto profile = dp_trainer::loadMachineProfile((sourceDir() / "simgpu" / "profiles" / "default.json").string());
  auto predicted = dp_trainer::predictStep(profile, *parsed.options, kRanks);
  const std::map<std::string, double> model = {{"layer_forward", predicted.forward_ns},
                                               {"layer_backward_params", predicted.backward_params_ns},
                                               {"layer_backward_input", predicted.backward_input_ns},
                                               {"sgd_update", predicted.sgd_ns}};
  int checked = 0;
  for (const RecordedStore& store : trained.stores) {
    for (const Op* op : store.opsOf(OpKind::Kernel)) {
      std::string name = op->name.substr(0, op->name.find('('));
      auto expected = model.find(name);
      if (expected == model.end()) continue;
      EXPECT_NEAR(static_cast<double>(op->row.end_ns - op->row.start_ns), expected->second, 1'000.0) << name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 300);
}

// One rank of the job killed with SIGKILL in the middle of training: its store stays readable,
// holding whole rows up to its last flush (the job itself fails, as it would).
TEST(TrainerRecording, ARankKilledMidRunLeavesItsStoreReadable) {
  TempDir dir;
  TrainerLaunch launch = trainerLaunch(dir, "naive", "cupti", {"--iterations", "100000", "--warmup", "1", "--watchdog", "30"});
  Child job(launch.argv, launch.environment);
  const auto victim = dir.path() / "rank-2.sqlite";
  // Wait until rank 2 has committed a few iterations.
  std::int64_t pid = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (!std::filesystem::exists(victim)) continue;
    try {
      RecordedStore store = readStore(victim);
      int steps = 0;
      for (const NvtxRange& range : store.nvtx) steps += range.name.starts_with("ProfilerStep#") ? 1 : 0;
      if (steps >= 3) {
        pid = std::stoll(store.meta.at("pid"));
        break;
      }
    } catch (const std::exception&) {
      // Not committed yet.
    }
  }
  ASSERT_GT(pid, 0) << "rank 2 never committed 3 iterations: " << job.outSoFar();
  ASSERT_EQ(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
  ChildResult result = job.wait(std::chrono::seconds(120));
  EXPECT_NE(result.exit_code, 0) << "the job fails without one of its ranks";

  auto reader = syncopate::trace::StoreReader::open(victim);
  ASSERT_TRUE(reader.ok()) << reader.message();
  EXPECT_TRUE(reader->checkIntegrity().ok());
  RecordedStore store = readStore(victim);
  EXPECT_EQ(store.rank, 2);
  int steps = 0;
  for (const NvtxRange& range : store.nvtx) steps += range.name.starts_with("ProfilerStep#") ? 1 : 0;
  EXPECT_GE(steps, 3);
  EXPECT_GE(store.count(OpKind::Kernel), 3 * 96);
  EXPECT_GE(store.collectives.size(), 3u * 24);
  for (const Op& op : store.ops) EXPECT_GE(op.row.end_ns, op.row.start_ns);
}

}  // namespace
}  // namespace collector_test
