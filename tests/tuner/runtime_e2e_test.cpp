// The reordering runtime end to end, on simgpu with 4 ranks of grad_sync under mpirun: a run
// is recorded, tuned, and re-run with the plan through the same recording environment as
// `syncopate run --plan`. Each test states which of the runtime's invariants (docs/tuner.md,
// "The runtime's invariants") it checks.
// grad_sync verifies every iteration's reduced gradients (and the updated values) bit for bit
// itself and exits 1 on any difference, so a broken dependency fails the run.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "support/child_process.hpp"
#include "support/recorded_store.hpp"
#include "support/recording.hpp"
#include "syncopate/collector/record.hpp"
#include "syncopate/trace/reader.hpp"
#include "syncopate/tuner/compare.hpp"
#include "syncopate/tuner/executor.hpp"
#include "syncopate/tuner/plan.hpp"
#include "syncopate/tuner/tune.hpp"

namespace syncopate::tuner {
namespace {

using collector_test::buildDir;
using collector_test::sourceDir;
using collector_test::TempDir;
using namespace std::chrono_literals;

constexpr int kRanks = 4;

// `exits`: a rank is meant to fail, and must not end the others (every rank is observed): mpirun
// is told to end no rank for another's non-zero status or its exit without MPI_Finalize (else
// it kills the rest as soon as the first stops, before they say why), and then exits 0
// whatever the ranks did, so each rank's exit status is written to `exits`/rank-<R> by a shell
// around it. Otherwise (empty) a rank that fails (grad_sync's own bit for bit checks) makes
// mpirun exit non-zero.
std::vector<std::string> gradSync(const std::vector<std::string>& extra, const std::filesystem::path& exits) {
  std::vector<std::string> argv = {"mpirun", "-np", std::to_string(kRanks), "--oversubscribe", "--bind-to", "none",
                                   "--mca", "btl", "self,vader"};
  if (!exits.empty()) {
    argv.insert(argv.end(), {"--mca", "orte_abort_on_non_zero_status", "0", "--mca", "orte_allowed_exit_without_sync",
                             "1", "/bin/sh", "-c",
                             "\"$0\" \"$@\"; echo $? > '" + exits.string() + "/rank-'$OMPI_COMM_WORLD_RANK"});
  }
  argv.insert(argv.end(), {(buildDir() / "bin" / "tuner_grad_sync").string(), "--produce-cost", "2000", "--update-cost",
                           "200", "--iterations", "8"});
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

constexpr const char* kProfile = "grad_sync.json";

// `driver`: the stand-in driver (tests/collector/programs/fake_driver.cpp) comes first on the
// library path, for launches through the driver API.
std::map<std::string, std::string> environment(const std::filesystem::path& dir, const std::filesystem::path& plan,
                                               int watchdog_s, const std::string& profile, bool driver) {
  collector_test::RecordingSetup setup;
  setup.directory = dir;
  auto env = collector_test::recordingEnvironment(setup);
  if (driver) {
    env["LD_LIBRARY_PATH"] =
        (buildDir() / "lib" / "collector-test-driver").string() + ":" + (buildDir() / "lib" / "simgpu").string();
  }
  const std::filesystem::path named(profile);
  env["SIMGPU_PROFILE"] = (named.is_absolute() ? named : sourceDir() / "tests" / "tuner" / "profiles" / named).string();
  if (!plan.empty()) {
    env["SYNCOPATE_PLAN"] = plan.string();
    env["SYNCOPATE_WATCHDOG_S"] = std::to_string(watchdog_s);
  }
  return env;
}

struct JobRun {
  collector_test::ChildResult result;
  std::filesystem::path dir;
};

// Runs `argv` recorded into `dir` (with `plan` applied, when given).
JobRun recordCommand(const std::filesystem::path& dir, const std::vector<std::string>& argv,
                     const std::filesystem::path& plan, int watchdog_s, const std::string& profile, bool driver) {
  std::filesystem::create_directories(dir);
  JobRun r{collector_test::run(argv, environment(dir, plan, watchdog_s, profile, driver), 180s), dir};
  std::ofstream(dir / "job.log") << r.result.out;  // what compare reads, as syncopate record keeps it
  return r;
}

JobRun record(const std::filesystem::path& dir, const std::vector<std::string>& extra = {},
              const std::filesystem::path& plan = {}, int watchdog_s = 60, const std::string& profile = kProfile,
              const std::filesystem::path& exits = {}, bool driver = false) {
  if (!exits.empty()) std::filesystem::create_directories(exits);
  return recordCommand(dir, gradSync(extra, exits), plan, watchdog_s, profile, driver);
}

nlohmann::json runtimeReport(const std::filesystem::path& dir, int rank) {
  std::ifstream in(dir / ("runtime-rank-" + std::to_string(rank) + ".json"));
  return nlohmann::json::parse(in);
}

// Records a baseline run of grad_sync (with `extra` arguments) in `dir` and writes the plan
// tuned from it as dir/plan.json. Empty on success, else what failed.
std::string recordBaselineAndPlan(const std::filesystem::path& dir, const std::vector<std::string>& extra, JobRun& base) {
  base = record(dir, extra);
  if (base.result.exit_code != 0) return "the baseline run failed: " + base.result.err;
  auto report = tuneRun(base.dir, {});
  if (!report.ok()) return "tune failed: " + report.message();
  if (!report->plan.has_value()) return "tune found no plan: " + report->search.note;
  if (!writePlan(*report->plan, base.dir / "plan.json").ok()) return "the plan could not be written";
  return {};
}

// The recorded baseline and its plan, made once for the suite (recording takes seconds).
class RuntimeE2E : public ::testing::Test {
 protected:
  // A failure here fails every test of the suite (GoogleTest would only skip them).
  static void SetUpTestSuite() {
    scratch_ = new TempDir();
    JobRun base;
    if (std::string why = recordBaselineAndPlan(scratch_->path() / "baseline", {}, base); !why.empty()) {
      setup_failure_ = new std::string(std::move(why));
      return;
    }
    baseline_ = new JobRun(base);
  }
  static void TearDownTestSuite() {
    delete baseline_;
    delete scratch_;
    delete setup_failure_;
  }
  void SetUp() override { ASSERT_EQ(setup_failure_, nullptr) << *setup_failure_; }
  static std::filesystem::path plan() { return baseline_->dir / "plan.json"; }
  static TempDir* scratch_;
  static JobRun* baseline_;
  static std::string* setup_failure_;
};
TempDir* RuntimeE2E::scratch_ = nullptr;
JobRun* RuntimeE2E::baseline_ = nullptr;
std::string* RuntimeE2E::setup_failure_ = nullptr;

// Invariants 1, 2, 4: the plan is applied on every rank, identically, and the gradients are
// the baseline's bit for bit.
TEST_F(RuntimeE2E, PlanAppliesOnEveryRankWithBitIdenticalGradients) {
  const JobRun tuned = record(scratch_->path() / "tuned", {}, plan());
  ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
  std::set<std::string> stats;
  for (int r = 0; r < kRanks; ++r) {
    const nlohmann::json report = runtimeReport(tuned.dir, r);
    EXPECT_TRUE(report["applied"].get<bool>()) << report.dump();
    EXPECT_GT(report["stats"]["planned_groups"].get<int>(), 0);
    EXPECT_GT(report["stats"]["producer_waits"].get<int>(), 0);
    EXPECT_FALSE(report["fallbacks"].contains("ranks_disagree"));
    stats.insert(report["stats"].dump());  // the same decisions on every rank
  }
  EXPECT_EQ(stats.size(), 1u);
  auto c = compareRuns(baseline_->dir, tuned.dir);
  ASSERT_TRUE(c.ok()) << c.message();
  ASSERT_TRUE(c->gradients_identical.has_value()) << c->gradients_note;
  EXPECT_TRUE(*c->gradients_identical) << c->gradients_note;
  EXPECT_EQ(c->checksums_compared, 8);

  // The recording shows the all-reduces on a stream of their own, not the kernels' stream.
  auto store = trace::StoreReader::open(tuned.dir / "rank-0.sqlite");
  ASSERT_TRUE(store.ok()) << store.message();
  std::set<std::int64_t> kernel_streams, collective_streams;
  ASSERT_TRUE(store->forEachOp([&](const trace::OpRow& op) {
                     if (op.kind == trace::OpKind::Kernel) kernel_streams.insert(op.stream_id.value_or(-1));
                     if (op.kind == trace::OpKind::Collective) collective_streams.insert(op.stream_id.value_or(-1));
                   }).ok());
  ASSERT_EQ(kernel_streams.size(), 1u);
  EXPECT_FALSE(collective_streams.empty());
  EXPECT_EQ(collective_streams.count(*kernel_streams.begin()), 0u);
}

// Invariant 3: graph capture is not reordered; the run still finishes correctly.
TEST_F(RuntimeE2E, GraphCaptureFallsBackAndFinishesCorrectly) {
  const JobRun tuned = record(scratch_->path() / "capture", {"--capture"}, plan());
  ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
  const nlohmann::json report = runtimeReport(tuned.dir, 0);
  EXPECT_TRUE(report["fallbacks"].contains("graph_capture")) << report.dump();
  EXPECT_NE(tuned.result.err.find("graph"), std::string::npos);
  auto c = compareRuns(baseline_->dir, tuned.dir);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->gradients_identical.value_or(false)) << c->gradients_note;
}

// The test profile as an older driver (CUDA 12.2) would be: one without cudaFuncGetParamInfo.
std::filesystem::path oldDriverProfile(const std::filesystem::path& dir) {
  std::ifstream in(sourceDir() / "tests" / "tuner" / "profiles" / kProfile);
  nlohmann::json profile = nlohmann::json::parse(in);
  profile["driver_version"] = 12020;
  const std::filesystem::path path = dir / "old_driver.json";
  std::ofstream(path) << profile.dump();
  return path;
}

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// Invariant 3: a kernel whose parameter buffer cannot be read (an extern "C" kernel, whose name
// gives no sizes, on a driver without the parameter query) is a barrier; results stay right.
// The C++ kernels' layouts still come from their names, so the plan applies around it, and each
// process says once that the query is missing.
TEST_F(RuntimeE2E, UnknownParameterLayoutFallsBackAndFinishesCorrectly) {
  const std::filesystem::path dir = scratch_->path() / "extern_c";
  std::filesystem::create_directories(dir);
  const JobRun tuned = record(dir, {"--extern-c"}, plan(), 60, oldDriverProfile(dir).string());
  ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
  const nlohmann::json report = runtimeReport(tuned.dir, 0);
  EXPECT_TRUE(report["fallbacks"].contains("unknown_parameter_layout")) << report.dump();
  EXPECT_GT(report["stats"]["planned_groups"].get<int>(), 0) << report.dump();
  EXPECT_EQ(occurrences(tuned.result.err, "has no kernel parameter query"), static_cast<std::size_t>(kRanks))
      << tuned.result.err;
  auto c = compareRuns(baseline_->dir, tuned.dir);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->gradients_identical.value_or(false)) << c->gradients_note;
}

// Invariants 2 and 3 around work whose effects the runtime does not follow: the updates as a
// graph built node by node, launched between the all-reduces the runtime holds and the next
// iteration (`--graph`, once per iteration); and stream-ordered frees (`--stream-ordered`, two
// per iteration): the all-reduces' send buffer is freed right after them and its memory taken
// at once by a scratch buffer that a kernel fills through a pointer into no gradient. Were the
// launch not ordered after the held all-reduces, the updates would read unreduced gradients;
// were the free not, the all-reduces would read what that kernel wrote (with either call passed
// through, grad_sync's own checks fail). Each is a barrier on its stream: the plan
// keeps applying around it (every iteration's group planned), the report counts each one, and
// the gradients are the baseline's bit for bit.
TEST_F(RuntimeE2E, GraphLaunchesAndStreamOrderedFreesAreBarriersAndTheJobFinishesCorrectly) {
  const std::pair<std::string, int> runs[] = {{"--graph", 8}, {"--stream-ordered", 16}};
  for (const auto& [option, barriers] : runs) {
    SCOPED_TRACE(option);
    const JobRun tuned = record(scratch_->path() / option.substr(2), {option}, plan());
    ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
    for (int r = 0; r < kRanks; ++r) {
      const nlohmann::json report = runtimeReport(tuned.dir, r);
      EXPECT_TRUE(report["applied"].get<bool>()) << "rank " << r << ": " << report.dump();
      EXPECT_EQ(report["stats"]["planned_groups"].get<int>(), 8) << "rank " << r;
      ASSERT_TRUE(report["fallbacks"].contains("unknown_api")) << "rank " << r << ": " << report.dump();
      EXPECT_EQ(report["fallbacks"]["unknown_api"]["count"].get<int>(), barriers) << "rank " << r;
    }
    auto c = compareRuns(baseline_->dir, tuned.dir);
    ASSERT_TRUE(c.ok()) << c.message();
    ASSERT_TRUE(c->gradients_identical.has_value()) << c->gradients_note;
    EXPECT_TRUE(*c->gradients_identical) << c->gradients_note;
    EXPECT_EQ(c->checksums_compared, 8);
  }
}

// Invariants 2 and 4: with the driver's parameter query, the same extern "C" kernel is no barrier:
// its pointers are found by scanning its parameters against the process's allocations, so it
// waits for the all-reduced gradients it reads (deferred waits) and the plan applies throughout.
TEST_F(RuntimeE2E, ExternCKernelIsScannedForTheBuffersItReads) {
  const JobRun tuned = record(scratch_->path() / "extern_c_scanned", {"--extern-c"}, plan());
  ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
  for (int r = 0; r < kRanks; ++r) {
    const nlohmann::json report = runtimeReport(tuned.dir, r);
    EXPECT_TRUE(report["applied"].get<bool>()) << report.dump();
    EXPECT_FALSE(report["fallbacks"].contains("unknown_parameter_layout")) << report.dump();
  }
  EXPECT_EQ(tuned.result.err.find("has no kernel parameter query"), std::string::npos);
  // The recording says what the scan found: the gradients read (parameter 0) and the sink
  // (parameter 2), both allocations of the program, for each of the 8 launches.
  const collector_test::RecordedStore store = collector_test::readStore(tuned.dir / "rank-0.sqlite");
  int inspections = 0;
  for (const collector_test::Op* op : store.opsOf(trace::OpKind::Kernel)) {
    if (op->name != "inspect_gradient") continue;
    ++inspections;
    std::vector<std::uint32_t> indices;
    for (const trace::OpArgRow& arg : store.op_args) {
      if (arg.correlation_id == op->row.correlation_id) indices.push_back(arg.arg_index);
    }
    EXPECT_EQ(indices, (std::vector<std::uint32_t>{0, 2}));
  }
  EXPECT_EQ(inspections, 8);
  auto c = compareRuns(baseline_->dir, tuned.dir);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->gradients_identical.value_or(false)) << c->gradients_note;
}

// Invariants 1, 2 and 4 on every launch path: the produce and update kernels go through
// __cudaLaunchKernel, cudaLaunchKernel, cudaLaunchKernelExC, and the driver's cuLaunchKernel and
// cuLaunchKernelEx by name and through cuGetProcAddress (one with a packed parameter buffer),
// each once per iteration, and in another place each time. A launch the runtime missed would
// let an update read a gradient before its moved all-reduce ends, or an all-reduce start before
// the kernel producing its gradient: grad_sync's own bit-for-bit checks would fail.
TEST_F(RuntimeE2E, EveryLaunchPathIsSeenAndOrdered) {
  const JobRun tuned = record(scratch_->path() / "launch_paths", {"--all-launch-paths"}, plan(), 60, kProfile, {}, true);
  ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
  std::set<std::string> stats;
  for (int r = 0; r < kRanks; ++r) {
    const nlohmann::json report = runtimeReport(tuned.dir, r);
    EXPECT_TRUE(report["applied"].get<bool>()) << report.dump();
    EXPECT_FALSE(report["fallbacks"].contains("unknown_parameter_layout")) << report.dump();
    EXPECT_GT(report["stats"]["producer_waits"].get<int>(), 0) << report.dump();
    stats.insert(report["stats"].dump());
  }
  EXPECT_EQ(stats.size(), 1u) << "the same decisions on every rank";
  auto c = compareRuns(baseline_->dir, tuned.dir);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->gradients_identical.value_or(false)) << c->gradients_note;
  EXPECT_EQ(c->checksums_compared, 8);

  const collector_test::RecordedStore store = collector_test::readStore(tuned.dir / "rank-0.sqlite");
  std::map<std::string, int> launches;
  for (const collector_test::ApiCall& call : store.api_calls) {
    if (call.name.find("aunchKernel") != std::string::npos) ++launches[call.name];
  }
  EXPECT_EQ(launches, (std::map<std::string, int>{{"__cudaLaunchKernel", 8},
                                                  {"cudaLaunchKernel", 8},
                                                  {"cudaLaunchKernelExC", 8},
                                                  {"cuLaunchKernel", 24},
                                                  {"cuLaunchKernelEx", 16}}));
  ASSERT_EQ(store.count(trace::OpKind::Kernel), 64);
  for (const trace::OpArgRow& arg : store.op_args) EXPECT_NE(arg.arg_index, trace::kUnknownLayoutArgIndex);
}

// Invariants 1 and 3: one rank's call sequence differs (an extra host sync between
// all-reduces); every rank sees the disagreement at the same flush, keeps the original order
// from there, and the run finishes with the right gradients.
TEST_F(RuntimeE2E, RanksWhoseCallsDifferFallBackTogether) {
  const JobRun tuned = record(scratch_->path() / "diverge", {"--diverge-rank", "1"}, plan());
  ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
  for (int r = 0; r < kRanks; ++r) {
    const nlohmann::json report = runtimeReport(tuned.dir, r);
    EXPECT_FALSE(report["applied"].get<bool>()) << "rank " << r;
    EXPECT_TRUE(report["fallbacks"].contains("ranks_disagree")) << "rank " << r << ": " << report.dump();
    // It applied the plan before the divergence (iterations 0 and 1).
    EXPECT_GE(report["stats"]["planned_groups"].get<int>(), 2) << "rank " << r;
  }
  EXPECT_NE(tuned.result.err.find("call sequences differ"), std::string::npos) << tuned.result.err;
  auto c = compareRuns(baseline_->dir, tuned.dir);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->gradients_identical.value_or(false)) << c->gradients_note;
}

// Invariant 3, for what a rank decides alone: the plan applied to the `applied_groups` groups
// before `why` (one per iteration), then was disabled for the rest of the run on every rank;
// each process said so once; the gradients are the baseline's at every iteration.
void expectDisabledFromThereOn(const JobRun& baseline, const JobRun& tuned, Fallback why, int applied_groups) {
  const std::string code(toString(why));
  for (int r = 0; r < kRanks; ++r) {
    const nlohmann::json report = runtimeReport(tuned.dir, r);
    EXPECT_FALSE(report["applied"].get<bool>()) << "rank " << r;
    EXPECT_EQ(report["disabled_reason"].get<std::string>(), describe(why)) << "rank " << r;
    ASSERT_TRUE(report["fallbacks"].contains(code)) << "rank " << r << ": " << report.dump();
    EXPECT_EQ(report["fallbacks"][code]["count"].get<int>(), 1) << "rank " << r;
    // Besides it, only the legacy stream's copies made while collectives of the job's blocking
    // streams were redirected (before the plan was disabled).
    for (const auto& [fallback, seen] : report["fallbacks"].items()) {
      EXPECT_TRUE(fallback == code || fallback == "legacy_stream") << "rank " << r << ": " << report.dump();
    }
    EXPECT_EQ(report["stats"]["planned_groups"].get<int>(), applied_groups) << "rank " << r;
    EXPECT_EQ(report["stats"]["unplanned_groups"].get<int>(), 0) << "rank " << r;
    // Said once by each process, naming its rank.
    const std::string line = "runtime (rank " + std::to_string(r) + "): " + std::string(describe(why));
    int said = 0;
    for (std::size_t at = tuned.result.err.find(line); at != std::string::npos; at = tuned.result.err.find(line, at + 1)) ++said;
    EXPECT_EQ(said, 1) << "rank " << r << ": " << tuned.result.err;
  }
  auto c = compareRuns(baseline.dir, tuned.dir);
  ASSERT_TRUE(c.ok()) << c.message();
  ASSERT_TRUE(c->gradients_identical.has_value()) << c->gradients_note;
  EXPECT_TRUE(*c->gradients_identical) << c->gradients_note;
  EXPECT_EQ(c->checksums_compared, 8);
}

// Invariants 1, 2, 4: from iteration 3 a second thread launches the updates, which follow this
// thread's all-reduces only through the program's own thread synchronisation (a join), as
// autograd's thread and the main thread do. The runtime follows both threads: the plan applies
// to every iteration on every rank, with the same decisions, and the gradients are the
// baseline's.
TEST_F(RuntimeE2E, SecondThreadIsFollowedAndThePlanAppliesToTheEnd) {
  const JobRun tuned = record(scratch_->path() / "thread", {"--thread-from", "3"}, plan());
  ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
  std::set<std::string> stats;
  for (int r = 0; r < kRanks; ++r) {
    const nlohmann::json report = runtimeReport(tuned.dir, r);
    EXPECT_TRUE(report["applied"].get<bool>()) << "rank " << r << ": " << report.dump();
    // At most the legacy stream's copies made while collectives of the job's blocking streams
    // were redirected (whether the host had waited for them first depends on the threads' pace).
    for (const auto& [fallback, seen] : report["fallbacks"].items()) {
      EXPECT_EQ(fallback, "legacy_stream") << "rank " << r << ": " << report.dump();
    }
    EXPECT_EQ(report["stats"]["planned_groups"].get<int>(), 8) << "rank " << r;
    stats.insert(report["stats"].dump());
  }
  EXPECT_EQ(stats.size(), 1u);
  auto c = compareRuns(baseline_->dir, tuned.dir);
  ASSERT_TRUE(c.ok()) << c.message();
  ASSERT_TRUE(c->gradients_identical.has_value()) << c->gradients_note;
  EXPECT_TRUE(*c->gradients_identical) << c->gradients_note;
  EXPECT_EQ(c->checksums_compared, 8);
}

// Invariants 1 and 3: a second thread's host sync falls between the all-reduces on rank 1 and
// after them on the others: the ranks' call sequences differ only in how their threads
// interleave. Every rank sees it at the same flush and keeps the original order from there
// (never a hang), and the gradients are right.
TEST_F(RuntimeE2E, RanksWhoseThreadsInterleaveDifferentlyFallBackTogether) {
  const JobRun tuned = record(scratch_->path() / "interleave", {"--sync-thread-rank", "1"}, plan());
  ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
  for (int r = 0; r < kRanks; ++r) {
    const nlohmann::json report = runtimeReport(tuned.dir, r);
    EXPECT_FALSE(report["applied"].get<bool>()) << "rank " << r;
    EXPECT_TRUE(report["fallbacks"].contains("ranks_disagree")) << "rank " << r << ": " << report.dump();
    EXPECT_EQ(report["stats"]["planned_groups"].get<int>(), 2) << "rank " << r;
  }
  auto c = compareRuns(baseline_->dir, tuned.dir);
  ASSERT_TRUE(c.ok()) << c.message();
  ASSERT_TRUE(c->gradients_identical.has_value()) << c->gradients_note;
  EXPECT_TRUE(*c->gradients_identical) << c->gradients_note;
}

// Invariant 3: at iteration 5, between its all-reduces and its updates, each rank switches to
// its other device and back; the plan is disabled there (simgpu with two devices per process).
TEST_F(RuntimeE2E, SecondDeviceDisablesThePlanAndTheJobFinishesCorrectly) {
  const JobRun tuned =
      record(scratch_->path() / "device", {"--switch-device", "5"}, plan(), 60, "grad_sync_two_devices.json");
  ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
  expectDisabledFromThereOn(*baseline_, tuned, Fallback::MultipleDevices, 5);
}

// How each rank of a job whose rank 3 stopped ended: its exit status, and the lines in which
// the runtime said why it stopped it, by cause.
struct StoppedRank {
  int exit_code = -1;
  int watchdog_lines = 0;     // "waited N s for the other ranks to agree", "an all-reduce ... has not completed"
  int peer_failed_lines = 0;  // "the agreement between ranks at a flush failed", "an all-reduce ... failed"
  int failed_collective_lines = 0;  // the last of these: stopped at a host synchronisation
};

std::vector<StoppedRank> stoppedRanks(const JobRun& job, const std::filesystem::path& exits) {
  std::vector<StoppedRank> ranks(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    std::ifstream in(exits / ("rank-" + std::to_string(r)));
    in >> ranks[static_cast<std::size_t>(r)].exit_code;
  }
  const std::regex line(R"(runtime \(rank (\d)\): (waited \d+ s for the other ranks to agree|a collective the plan issued has not completed, and no host synchronisation has returned, for \d+ s|the agreement between ranks at a flush failed after [0-9.]+ s \(NCCL error \d+: [^)]*\); another rank has died or left|a collective the plan issued failed \(NCCL error \d+: [^)]*\); another rank has died or left))");
  for (std::sregex_iterator it(job.result.err.begin(), job.result.err.end(), line), end; it != end; ++it) {
    StoppedRank& r = ranks.at(static_cast<std::size_t>(std::stoi((*it)[1].str())));
    const std::string cause = (*it)[2].str();
    const bool failed_collective = cause.rfind("a collective the plan issued failed", 0) == 0;
    ++(cause.rfind("the agreement", 0) == 0 || failed_collective ? r.peer_failed_lines : r.watchdog_lines);
    r.failed_collective_lines += failed_collective ? 1 : 0;
  }
  return ranks;
}

// What must hold on every rank that was waiting for the stopped rank 3, whichever of them
// noticed first: it was stopped exactly once, by the watchdog or by a failed agreement (the
// peers the others stopped before it are dead peers to it), never read as ranks disagreeing;
// it exited with the runtime's status 3 after writing its report. Rank 3 ends as grad_sync's
// --stall-rank makes it (status 9), unless `rank3_watchdog_may_fire` and its own watchdog came
// first: a bucket it issued before stopping was seen (under load, about one run in three) to
// stay incomplete for the 3 s while the others sat in their agreement; simgpu's streams of a
// device wait up to a second per decision for each other's model time, and the stream blocked
// in the agreement never catches up.
void expectWaitingRanksStopped(const JobRun& job, const std::vector<StoppedRank>& ranks, bool rank3_watchdog_may_fire) {
  for (int r = 0; r < 3; ++r) {
    const StoppedRank& s = ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(s.exit_code, 3) << "rank " << r << ": " << job.result.err;
    EXPECT_EQ(s.watchdog_lines + s.peer_failed_lines, 1) << "rank " << r << ": " << job.result.err;
    const nlohmann::json report = runtimeReport(job.dir, r);
    EXPECT_TRUE(report["watchdog"].is_string()) << "rank " << r << ": " << report.dump();
    EXPECT_FALSE(report["fallbacks"].contains("ranks_disagree")) << "rank " << r << ": " << report.dump();
  }
  const StoppedRank& stalled = ranks[3];
  EXPECT_EQ(stalled.peer_failed_lines, 0) << job.result.err;
  if (rank3_watchdog_may_fire && stalled.exit_code == 3) {
    EXPECT_EQ(stalled.watchdog_lines, 1) << job.result.err;
  } else {
    EXPECT_EQ(stalled.exit_code, 9) << job.result.err;
    EXPECT_EQ(stalled.watchdog_lines, 0) << job.result.err;
  }
  EXPECT_EQ(job.result.err.find("call sequences differ"), std::string::npos) << job.result.err;
}

// What a rank the runtime stopped keeps of its recording (nothing already recorded is lost):
// before its exit the runtime has the recorder drain its rings and close the store (`end_ns`
// written, the write-ahead log folded in). Every rank got through iterations 0 and 1 whole
// before rank 3 stalled after its backward of iteration 2 (grad_sync's --stall-iteration), and a
// waiting rank stops in the agreement at iteration 2's flush, before the plan issues any of
// that iteration's all-reduces: so its store holds exactly both iterations' steps, their
// gradients' all-reduces (whatever the buckets, 4 layers of 2^14 floats each), and the calls
// of the three iterations' zeroing and produce kernels and the two first iterations' updates. Their GPU
// times are all there unless `gpu_may_hang`: while an agreement waits for a rank that never
// comes, simgpu may never run what was issued last (see expectWaitingRanksStopped); those ops
// are then dropped and counted, as at any exit. A rank that stopped at a host synchronisation
// instead (`at_host_sync`: its check of iteration 0, at the end of iteration 1, found the
// all-reduces of iteration 1 failed) never issued iteration 2: two zeroings and produces.
void expectStoreKeptUpToTheStop(const JobRun& job, int rank, bool gpu_may_hang, bool at_host_sync = false) {
  const int produced_iterations = at_host_sync ? 2 : 3;
  const std::filesystem::path store = job.dir / ("rank-" + std::to_string(rank) + ".sqlite");
  SCOPED_TRACE("rank " + std::to_string(rank) + " " + store.string());
  ASSERT_TRUE(std::filesystem::exists(store)) << job.result.err;
  EXPECT_FALSE(std::filesystem::exists(store.string() + "-wal")) << "the store was not closed";
  const collector_test::RecordedStore recorded = collector_test::readStore(store);
  EXPECT_TRUE(recorded.meta.contains("end_ns")) << "the store was not closed";
  std::set<std::string> steps;
  for (const collector_test::NvtxRange& range : recorded.nvtx) {
    if (range.name.starts_with("ProfilerStep#")) steps.insert(range.name);
  }
  EXPECT_EQ(steps, (std::set<std::string>{"ProfilerStep#0", "ProfilerStep#1"}));
  std::uint64_t reduced = 0;
  for (const trace::CollectiveRow& c : recorded.collectives) {
    if (c.coll_type == trace::CollType::AllReduce) reduced += c.count.value_or(0);
  }
  EXPECT_EQ(reduced, 2u * 4u * (1u << 14));
  std::map<std::string, int> calls;
  for (const collector_test::ApiCall& call : recorded.api_calls) ++calls[call.name];
  // The triple-chevron launches (CUDA 13 routes them through __cudaLaunchKernel), and one
  // gradient zeroing per iteration.
  EXPECT_EQ(calls["__cudaLaunchKernel"], produced_iterations * 4 + 2 * 4) << nlohmann::json(calls).dump();
  EXPECT_EQ(calls["cudaMemsetAsync"], produced_iterations) << nlohmann::json(calls).dump();
  int produced = 0, updated = 0;
  for (const collector_test::Op& op : recorded.ops) {
    produced += op.name.starts_with("produce_gradient(") ? 1 : 0;
    updated += op.name.starts_with("apply_update(") ? 1 : 0;
  }
  if (gpu_may_hang) {
    EXPECT_LE(produced, produced_iterations * 4);
    EXPECT_LE(updated, 2 * 4);
    EXPECT_GE(static_cast<std::int64_t>(produced + updated) + recorded.counter("ops_untimed_timing_failed"),
              produced_iterations * 4 + 2 * 4);
  } else {
    EXPECT_EQ(produced, produced_iterations * 4);
    EXPECT_EQ(updated, 2 * 4);
    EXPECT_EQ(recorded.counter("ops_untimed_timing_failed"), 0);
  }
}

// Invariant 3 (watchdog): a rank that stops makes the others wait at their next flush; the
// watchdog ends the wait with an error instead of a hang. The first to notice can only be a
// watchdog (nobody has died yet); a rank whose watchdog comes later may find the first ones
// gone, and stops for that instead. Rank 3's stall (10 s) outlasts the watchdog (3 s).
TEST_F(RuntimeE2E, WatchdogTurnsAHangIntoAnErrorOnEveryWaitingRank) {
  const auto start = std::chrono::steady_clock::now();
  const std::filesystem::path exits = scratch_->path() / "stall-exits";
  const JobRun tuned =
      record(scratch_->path() / "stall", {"--stall-rank", "3", "--stall-seconds", "10"}, plan(), 3, kProfile, exits);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 120.0);
  const std::vector<StoppedRank> ranks = stoppedRanks(tuned, exits);
  expectWaitingRanksStopped(tuned, ranks, /*rank3_watchdog_may_fire=*/true);
  int by_watchdog = 0;
  for (const StoppedRank& r : ranks) by_watchdog += r.watchdog_lines;
  EXPECT_GE(by_watchdog, 1) << tuned.result.err;
  for (int r = 0; r < 3; ++r) expectStoreKeptUpToTheStop(tuned, r, /*gpu_may_hang=*/true);
}

// Invariant 3 (a dead peer): a rank that exits makes the others' agreement at their next flush
// fail, or, when its GPU had not yet run the all-reduces of iteration 1 it agreed to (it runs
// behind its host), makes those fail, which the others see at their next host synchronisation
// (their check of iteration 0, before they issue iteration 2). Each of them stops at once with
// one of these causes, long before its watchdog (60 s here), and not as if the ranks disagreed.
TEST_F(RuntimeE2E, RankThatExitsStopsTheOthersAtTheirNextAgreementOrSynchronisation) {
  const std::filesystem::path exits = scratch_->path() / "exit-exits";
  const JobRun tuned =
      record(scratch_->path() / "exit", {"--stall-rank", "3", "--stall-seconds", "0"}, plan(), 60, kProfile, exits);
  const std::vector<StoppedRank> ranks = stoppedRanks(tuned, exits);
  expectWaitingRanksStopped(tuned, ranks, /*rank3_watchdog_may_fire=*/false);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(ranks[static_cast<std::size_t>(r)].peer_failed_lines, 1) << "rank " << r << ": " << tuned.result.err;
  }
  for (int r = 0; r < 3; ++r) {
    expectStoreKeptUpToTheStop(tuned, r, /*gpu_may_hang=*/false,
                               /*at_host_sync=*/ranks[static_cast<std::size_t>(r)].failed_collective_lines == 1);
  }
}

// Invariant 3 (a peer that dies after agreeing): rank 3 exits at the end of the last iteration,
// after its agreement, with its all-reduces issued but not yet run (grad_sync's
// --exit-after-issue-rank; its GPU runs an iteration behind its host). The others' all-reduces
// of those groups then fail, and simgpu completes them with what they had, as NCCL may: each
// other rank stops at its next host synchronisation, before grad_sync reads the half-reduced
// gradients (its own check would report mismatches), with exit code 3 and the runtime's
// sentence. Every checksum rank 0 printed before that is the baseline's.
TEST_F(RuntimeE2E, RankThatDiesAfterAgreeingStopsTheOthersBeforeTheyReadItsAllReduces) {
  const std::filesystem::path exits = scratch_->path() / "exit-after-issue-exits";
  const JobRun tuned = record(scratch_->path() / "exit-after-issue",
                              {"--exit-after-issue-rank", "3", "--stall-iteration", "7"}, plan(), 60, kProfile, exits);
  for (int r = 0; r < kRanks; ++r) {
    int status = -1;
    std::ifstream(exits / ("rank-" + std::to_string(r))) >> status;
    EXPECT_EQ(status, r == 3 ? 9 : 3) << "rank " << r << ": " << tuned.result.err;
    if (r == 3) continue;
    const std::string line = "runtime (rank " + std::to_string(r) + "): a collective the plan issued failed (NCCL error 6";
    EXPECT_EQ(occurrences(tuned.result.err, line), 1u) << tuned.result.err;
    const nlohmann::json report = runtimeReport(tuned.dir, r);
    EXPECT_NE(report["watchdog"].get<std::string>().find("a collective the plan issued failed"), std::string::npos)
        << report.dump();
  }
  EXPECT_EQ(tuned.result.err.find("mismatches"), std::string::npos) << tuned.result.err;
  auto c = compareRuns(baseline_->dir, tuned.dir);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->gradients_identical.value_or(false)) << c->gradients_note;
  EXPECT_GE(c->checksums_compared, 6);  // iterations 0 to 5 ran whole on every rank
  EXPECT_LE(c->checksums_compared, 7);  // iteration 7's never completes
}

// Invariant 4: the one-step-delayed mode changes the training mathematics, so a plan that
// uses it (its checksum valid) is never applied: every process says why and runs unchanged.
TEST_F(RuntimeE2E, DelayedPlanIsRefusedAndTheJobRunsUnchanged) {
  auto delayed = readPlan(plan());
  ASSERT_TRUE(delayed.ok()) << delayed.message();
  delayed->knobs.delayed = true;
  const std::filesystem::path delayed_plan = scratch_->path() / "delayed.json";
  ASSERT_TRUE(writePlan(*delayed, delayed_plan).ok());
  const JobRun tuned = record(scratch_->path() / "delayed", {}, delayed_plan);
  ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
  // The runtime never learns its rank when it stays off: its reports are named by process.
  int reports = 0;
  for (const auto& entry : std::filesystem::directory_iterator(tuned.dir)) {
    if (entry.path().filename().string().rfind("runtime-", 0) != 0) continue;
    ++reports;
    std::ifstream in(entry.path());
    const nlohmann::json report = nlohmann::json::parse(in);
    EXPECT_FALSE(report["applied"].get<bool>()) << report.dump();
    EXPECT_NE(report["disabled_reason"].get<std::string>().find("one-step-delayed"), std::string::npos) << report.dump();
    EXPECT_TRUE(report["fallbacks"].contains("plan_unusable")) << report.dump();
  }
  EXPECT_EQ(reports, kRanks);
  EXPECT_NE(tuned.result.err.find("changes the training mathematics"), std::string::npos) << tuned.result.err;
  auto c = compareRuns(baseline_->dir, tuned.dir);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->gradients_identical.value_or(false)) << c->gradients_note;
}

// Fusion through the fusion buffer: gradients in separate allocations, one bucket for all.
TEST(RuntimeFusion, ScatteredGradientsFusedThroughTheFusionBufferStayIdentical) {
  TempDir scratch;
  const JobRun base = record(scratch.path() / "baseline", {"--scattered"});
  ASSERT_EQ(base.result.exit_code, 0) << base.result.err;
  auto report = tuneRun(base.dir, {});
  ASSERT_TRUE(report.ok()) << report.message();
  // Everything in one bucket, whatever the search preferred.
  Candidate c = report->search.candidates.front();
  c.knobs.delayed = false;
  c.knobs.bucket_bytes = 1ull << 40;
  c.knobs.split_bytes = 0;
  Plan plan = planFor(*report, c);
  ASSERT_TRUE(writePlan(plan, base.dir / "plan.json").ok());
  const JobRun tuned = record(scratch.path() / "tuned", {"--scattered"}, base.dir / "plan.json");
  ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
  const nlohmann::json r0 = runtimeReport(tuned.dir, 0);
  EXPECT_EQ(r0["stats"]["units"].get<int>(), r0["stats"]["planned_groups"].get<int>()) << r0.dump();
  auto cmp = compareRuns(base.dir, tuned.dir);
  ASSERT_TRUE(cmp.ok()) << cmp.message();
  EXPECT_TRUE(cmp->gradients_identical.value_or(false)) << cmp->gradients_note;
}

// Invariant 4 for fused reduce-scatters and all-gathers: framework_trainer's ZeRO-1 step at the
// tiny size, its gradients in buckets of 0.5 MiB (several reduce-scatters and all-gathers a
// step), re-run with every group's collectives in one bucket: each group's reduce-scatters (and
// all-gathers) are one call on the fusion buffer laid out rank by rank, and every rank's updated
// parameters are the baseline's to the bit (the trainer checks each iteration's itself too).
TEST(RuntimeFusion, ShardedCollectivesFusedRankByRankStayIdentical) {
  TempDir scratch;
  const std::vector<std::string> trainer = {
      "mpirun", "-np", std::to_string(kRanks), "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader",
      (buildDir() / "bin" / "framework_trainer").string(), "--config", "tiny", "--mode", "zero1", "--bucket-mb", "0.5",
      "--iterations", "6", "--warmup", "1"};
  const std::string profile =
      (sourceDir() / "samples" / "framework_trainer" / "profiles" / "h100-4-hosts-400g.json").string();
  const JobRun base = recordCommand(scratch.path() / "baseline", trainer, {}, 60, profile, false);
  ASSERT_EQ(base.result.exit_code, 0) << base.result.err;
  auto report = tuneRun(base.dir, {});
  ASSERT_TRUE(report.ok()) << report.message();
  Candidate c = report->search.candidates.front();
  c.knobs.delayed = false;
  c.knobs.communication_stream = true;
  c.knobs.bucket_bytes = 1ull << 40;
  c.knobs.split_bytes = 0;
  c.knobs.keep_comms = 0;
  Plan plan = planFor(*report, c);
  std::size_t members = 0, fused_buckets = 0;
  for (const GroupPlan& g : plan.groups) {
    members += g.members;
    fused_buckets += g.bucketCount() < g.members ? 1 : 0;
  }
  ASSERT_GT(fused_buckets, 0u) << "no group has two collectives to fuse";
  ASSERT_TRUE(writePlan(plan, base.dir / "plan.json").ok());
  const JobRun tuned = recordCommand(scratch.path() / "tuned", trainer, base.dir / "plan.json", 60, profile, false);
  ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
  for (int rank = 0; rank < kRanks; ++rank) {
    const nlohmann::json r = runtimeReport(tuned.dir, rank);
    const nlohmann::json& stats = r["stats"];
    EXPECT_GT(stats["planned_groups"].get<int>(), 0) << r.dump();
    EXPECT_EQ(stats["unplanned_groups"].get<int>(), 0) << r.dump();
    // Fewer units than held collectives: buckets of several went as one call.
    EXPECT_LT(stats["units"].get<int>(), stats["held"].get<int>()) << r.dump();
  }
  auto cmp = compareRuns(base.dir, tuned.dir);
  ASSERT_TRUE(cmp.ok()) << cmp.message();
  EXPECT_TRUE(cmp->gradients_identical.value_or(false)) << cmp->gradients_note;
}

// Invariants 3 and 4 across a communicator's end: the all-reduces of iteration 0 go through a
// communicator the application then ends, in each of NCCL's three ways, and the rest through
// another. The runtime retires it and ends its twin right before NCCL frees it, so nothing asks
// NCCL about the freed communicator at the host synchronisations that follow (simgpu says so
// when a destroyed communicator is used: a use after free on a real NCCL). The plan, tuned from a
// run that does the same, knows the steady iterations' groups, on the other communicator: it
// goes on applying to all of them, iteration 0's group passes in its original order, and the
// gradients are the baseline's.
TEST(RuntimeCommunicatorLifetime, AnEndedCommunicatorIsNeverAskedAboutAgainAndThePlanGoesOn) {
  TempDir scratch;
  const std::vector<std::string> ends = {"--end-comm-at", "1"};
  JobRun base;
  const std::string why = recordBaselineAndPlan(scratch.path() / "baseline", ends, base);
  ASSERT_TRUE(why.empty()) << why;
  for (const char* how : {"destroy", "finalize", "abort"}) {
    SCOPED_TRACE(how);
    std::vector<std::string> extra = ends;
    extra.insert(extra.end(), {"--end-comm-by", how});
    const JobRun tuned = record(scratch.path() / how, extra, base.dir / "plan.json");
    ASSERT_EQ(tuned.result.exit_code, 0) << tuned.result.err;
    EXPECT_EQ(tuned.result.err.find("corrupted comm object"), std::string::npos) << tuned.result.err;
    std::set<std::string> stats;
    for (int r = 0; r < kRanks; ++r) {
      const nlohmann::json rank_report = runtimeReport(tuned.dir, r);
      EXPECT_TRUE(rank_report["applied"].get<bool>()) << "rank " << r << ": " << rank_report.dump();
      EXPECT_EQ(rank_report["stats"]["planned_groups"].get<int>(), 7) << "rank " << r << ": " << rank_report.dump();
      EXPECT_EQ(rank_report["stats"]["unplanned_groups"].get<int>(), 1) << "rank " << r << ": " << rank_report.dump();
      EXPECT_FALSE(rank_report["fallbacks"].contains("ranks_disagree")) << "rank " << r << ": " << rank_report.dump();
      stats.insert(rank_report["stats"].dump());
    }
    EXPECT_EQ(stats.size(), 1u) << "the same decisions on every rank";
    auto c = compareRuns(base.dir, tuned.dir);
    ASSERT_TRUE(c.ok()) << c.message();
    ASSERT_TRUE(c->gradients_identical.has_value()) << c->gradients_note;
    EXPECT_TRUE(*c->gradients_identical) << c->gradients_note;
    EXPECT_EQ(c->checksums_compared, 8);
  }
}

}  // namespace
}  // namespace syncopate::tuner
