// NVIDIA's nccl-tests, real clients nobody here wrote, recorded with `syncopate record` on
// simgpu: in one process driving four devices (-g 4: communicators made inside
// ncclGroupStart/End, collectives for all four devices issued from one thread in one group) and
// under mpirun (one process per rank, two devices each). Each prints the same result rows under
// `record` as without it; every NCCL call it issued is in the store, on its communicator's
// device, timed; `syncopate analyze` matches every call across devices and ranks and warns of
// nothing; `syncopate export` writes each of them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>

#include "support/child_process.hpp"
#include "support/nccl_tests_output.hpp"
#include "support/recorded_store.hpp"
#include "support/recording.hpp"

namespace collector_test {
namespace {

using syncopate::trace::CollType;
using syncopate::trace::OpKind;

struct Case {
  std::string test;  // all_reduce, ...: the binary <test>_perf
  int processes;     // 1: the single-process build; more: the MPI build under mpirun
  int devices;       // per process (-g)
};

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  return info.param.test + "_" + std::to_string(info.param.processes) + "x" + std::to_string(info.param.devices);
}

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.test << "_perf, " << c.processes << " process(es) x -g " << c.devices;
}

const NcclTestsSweep kSweep;

std::vector<std::string> jobCommand(const Case& c) {
  std::vector<std::string> argv;
  if (c.processes > 1) {
    argv = {COLLECTOR_TEST_MPIEXEC, "-np", std::to_string(c.processes)};
    for (const std::string& flag : splitFlags(COLLECTOR_TEST_MPIRUN_FLAGS)) argv.push_back(flag);
  }
  const std::string flavour = c.processes > 1 ? "mpi" : "single";
  argv.push_back(std::string(COLLECTOR_TEST_NCCL_TESTS_BUILD_DIR) + "/" + flavour + "/" + c.test + "_perf");
  argv.insert(argv.end(), {"-g", std::to_string(c.devices)});
  for (const std::string& argument : kSweep.arguments()) argv.push_back(argument);
  return argv;
}

std::map<std::string, std::string> jobEnvironment() { return {{"SIMGPU_PROFILE", testProfile("nccl_tests").string()}}; }

std::string syncopate() { return (buildDir() / "bin" / "syncopate").string(); }

nlohmann::json readJson(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

class NcclTestsRecording : public ::testing::TestWithParam<Case> {};

TEST_P(NcclTestsRecording, SameResultsEveryCallStoredMatchedAndExported) {
  const Case& c = GetParam();
  const bool p2p = c.test == "sendrecv";
  const int ranks = c.processes * c.devices;
  // Per device and per store: sendrecv's each run is a send and a receive.
  const int calls_per_device = kSweep.callsPerDevice(p2p ? 2 : 1);
  TempDir dir;
  const std::filesystem::path run_dir = dir.path() / "run";

  ChildResult plain = run(jobCommand(c), jobEnvironment(), std::chrono::seconds(120));
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  std::vector<std::string> record = {syncopate(), "record", "-o", run_dir.string(), "--"};
  for (const std::string& word : jobCommand(c)) record.push_back(word);
  ChildResult recorded = run(record, jobEnvironment(), std::chrono::seconds(120));
  ASSERT_EQ(recorded.exit_code, 0) << recorded.out << recorded.err;

  const std::vector<NcclTestsRow> rows = resultRows(recorded.out);
  EXPECT_EQ(static_cast<int>(rows.size()), kSweep.sizes()) << recorded.out;
  EXPECT_EQ(rows, resultRows(plain.out)) << "with the collector:\n" << recorded.out << "without:\n" << plain.out;
  for (const NcclTestsRow& row : rows) EXPECT_TRUE(row.out_of_place && row.in_place) << row.size;

  // Every call in the store, on its communicator's device, each device with its share, timed.
  const std::vector<RecordedStore> stores = readRun(run_dir);
  ASSERT_EQ(static_cast<int>(stores.size()), c.processes);
  int stored_calls = 0;
  std::set<int> comm_ranks;
  for (const RecordedStore& store : stores) {
    SCOPED_TRACE(store.path.filename().string());
    std::map<std::pair<std::uint64_t, std::int32_t>, std::int32_t> device_of_comm;
    for (const auto& comm : store.communicators) {
      ASSERT_TRUE(comm.device_id.has_value()) << "communicator rank " << comm.comm_rank << " has no device";
      EXPECT_EQ(comm.comm_size, ranks);
      device_of_comm[{comm.comm_id, comm.comm_rank}] = *comm.device_id;
      comm_ranks.insert(comm.comm_rank);
    }
    EXPECT_EQ(static_cast<int>(store.communicators.size()), c.devices);
    std::map<std::int64_t, const Op*> op_of;
    for (const Op& op : store.ops) {
      if (op.row.correlation_id) op_of[*op.row.correlation_id] = &op;
    }
    std::map<std::int32_t, int> calls_on_device;
    for (const auto& call : store.collectives) {
      auto op = op_of.find(call.correlation_id);
      ASSERT_NE(op, op_of.end()) << "collective row without its op";
      EXPECT_EQ(op->second->row.kind, p2p ? OpKind::P2P : OpKind::Collective);
      ASSERT_TRUE(call.comm_rank.has_value());
      const auto device = device_of_comm.find({call.comm_id, *call.comm_rank});
      ASSERT_NE(device, device_of_comm.end()) << "collective on a communicator the store does not have";
      EXPECT_EQ(op->second->row.device_id, device->second) << "stored on another device than its communicator's";
      ++calls_on_device[device->second];
    }
    // Each process drives devices of its own (nccl-tests: local rank x -g onwards).
    EXPECT_EQ(static_cast<int>(calls_on_device.size()), c.devices);
    for (const auto& [device, count] : calls_on_device) EXPECT_EQ(count, calls_per_device) << "device " << device;
    stored_calls += static_cast<int>(store.collectives.size());
    for (const char* counter : {"ops_untimed_timing_failed", "ops_untimed_no_timing_slot", "records_dropped_buffer_full",
                                "nccl_group_ops_overflow"}) {
      EXPECT_EQ(store.counter(counter), 0) << counter;
    }
    // NCCL runs a one-rank collective without a kernel, and an in-place one without any GPU
    // work at all (out of place it is a copy, timed as the call's): no GPU activity will ever
    // come for those, and the recording neither loses them nor holds their stream up. A send and
    // receive to itself still run a kernel.
    const int without_work = ranks == 1 && !p2p ? kSweep.inPlaceCallsPerDevice(1) : 0;
    EXPECT_EQ(store.counter("ops_without_gpu_activity"), without_work);
  }
  EXPECT_EQ(stored_calls, calls_per_device * ranks);
  EXPECT_EQ(static_cast<int>(comm_ranks.size()), ranks);

  // Matched across devices and ranks: every call complete, and nothing to warn of.
  ChildResult analyzed = run({syncopate(), "analyze", "--json", run_dir.string()}, {}, std::chrono::seconds(120));
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
  const nlohmann::json analysis = nlohmann::json::parse(analyzed.out, nullptr, false);
  ASSERT_FALSE(analysis.is_discarded()) << analyzed.out;
  // A collective is one call of all ranks; a send and its receive are one.
  const int calls = p2p ? calls_per_device / 2 * ranks : calls_per_device;
  EXPECT_EQ(analysis["collectives"]["matched"], calls);
  EXPECT_EQ(analysis["collectives"]["complete"], calls);
  EXPECT_EQ(analysis["collectives"]["partial"], 0);
  for (const auto& diagnostic : analysis["diagnostics"]) {
    EXPECT_EQ(diagnostic["severity"], "info") << diagnostic.dump();
  }

  // Exported: one communication slice per stored call on the ranks' processes (the "critical
  // path" process, pid -1, draws some of them again).
  const std::filesystem::path trace = dir.path() / "trace.json";
  ChildResult exported = run({syncopate(), "export", run_dir.string(), "-o", trace.string()}, {}, std::chrono::seconds(120));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const nlohmann::json events = readJson(trace);
  ASSERT_TRUE(events.contains("traceEvents"));
  int slices = 0;
  for (const auto& event : events["traceEvents"]) {
    const auto phase = event.find("ph");
    const auto category = event.find("cat");
    const auto process = event.find("pid");
    slices += phase != event.end() && *phase == "X" && category != event.end() && *category == "communication" &&
              process != event.end() && *process != -1;
  }
  EXPECT_EQ(slices, stored_calls);
}

INSTANTIATE_TEST_SUITE_P(OneProcessFourDevices, NcclTestsRecording,
                         ::testing::Values(Case{"all_reduce", 1, 4}, Case{"all_gather", 1, 4},
                                           Case{"reduce_scatter", 1, 4}, Case{"broadcast", 1, 4},
                                           Case{"sendrecv", 1, 4}),
                         caseName);
// One GPU, as a first try of nccl-tests on a workstation runs.
INSTANTIATE_TEST_SUITE_P(OneDevice, NcclTestsRecording,
                         ::testing::Values(Case{"all_reduce", 1, 1}, Case{"broadcast", 1, 1}), caseName);
INSTANTIATE_TEST_SUITE_P(UnderMpirun, NcclTestsRecording,
                         ::testing::Values(Case{"all_reduce", 2, 2}, Case{"all_gather", 2, 2},
                                           Case{"reduce_scatter", 2, 2}, Case{"broadcast", 2, 2},
                                           Case{"sendrecv", 2, 2}),
                         caseName);

}  // namespace
}  // namespace collector_test
