// The collector across a process's life: only processes that use CUDA get a store; a rank's
// store is named by its rank; a process killed with SIGKILL leaves a readable store up to its
// last flush; a store that cannot be created or written does not stop the job.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "support/child_process.hpp"
#include "support/recorded_store.hpp"
#include "support/recording.hpp"
#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/run_dir.hpp"

namespace collector_test {
namespace {

using syncopate::trace::OpKind;

std::map<std::string, std::string> workloadEnvironment(const TempDir& dir) {
  auto environment = recordingEnvironment({dir.path(), "events"});
  environment["SIMGPU_PROFILE"] = testProfile("workload").string();
  return environment;
}

TEST(ProcessLifecycle, ChildrenThatNeverUseCudaGetNoStore) {
  TempDir dir;
  // A shell in front (a non-CUDA parent), a forked child and an exec'd program (non-CUDA
  // children): only the workload itself records.
  const std::string script = workloadProgram().string() + " --iterations 1 --fork-child --exec-child /bin/true; /bin/true";
  ChildResult result = run({"/bin/sh", "-c", script}, workloadEnvironment(dir), std::chrono::seconds(60));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto stores = readRun(dir.path());
  ASSERT_EQ(stores.size(), 1u);
  EXPECT_NE(stores.front().meta.at("command").find("collector_cuda_workload"), std::string::npos);
  EXPECT_EQ(stores.front().count(OpKind::Kernel), 3);
}

TEST(ProcessLifecycle, LauncherRankNamesTheStore) {
  TempDir dir;
  auto environment = workloadEnvironment(dir);
  environment["OMPI_COMM_WORLD_RANK"] = "3";
  environment["OMPI_COMM_WORLD_LOCAL_RANK"] = "1";
  environment["OMPI_COMM_WORLD_SIZE"] = "4";
  ChildResult result = run({workloadProgram().string(), "--iterations", "1"}, environment, std::chrono::seconds(60));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "rank-3.sqlite"));
  RecordedStore store = readStore(dir.path() / "rank-3.sqlite");
  EXPECT_EQ(store.rank, 3);
  EXPECT_EQ(store.meta.at("world_size"), "4");
  EXPECT_EQ(store.meta.at("local_rank"), "1");
  EXPECT_EQ(store.meta.at("rank_source"), "OMPI_COMM_WORLD_RANK");
  EXPECT_FALSE(store.meta.at("host").empty());
  EXPECT_EQ(store.meta.at("clock"), "CLOCK_MONOTONIC");
  ASSERT_EQ(store.devices.size(), 1u);
  EXPECT_EQ(store.devices.front().name, "simgpu collector test device");
}

// Linux's reading of CPUID 0x80000007's invariant-TSC bit: both flags, or neither.
bool processorTscIsInvariant() {
#if defined(__x86_64__)
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    const auto has = [&line](const std::string& flag) { return (line + " ").find(" " + flag + " ") != std::string::npos; };
    return has("constant_tsc") && has("nonstop_tsc");
  }
#endif
  return false;
}

// Where the recorder's `auto` reads the TSC: the kernel keeps time with it, or offers it beside
// its hypervisor's clock on a processor whose counter is invariant.
bool kernelKeepsTimeWithTheTsc() {
#if defined(__x86_64__)
  std::ifstream current("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  if (std::getline(current, name) && name == "tsc") return true;
  std::ifstream available("/sys/devices/system/clocksource/clocksource0/available_clocksource");
  std::string offered;
  std::getline(available, offered);
  return processorTscIsInvariant() && (" " + offered + " ").find(" tsc ") != std::string::npos;
#else
  return false;
#endif
}

std::int64_t steadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Every host timestamp is CLOCK_MONOTONIC (the test's own steady_clock brackets the run, and the
// sleeps between iterations keep their length), whether read from the TSC where the kernel keeps
// time with it (meta.host_clock), from the TSC wherever the processor's is invariant
// (SYNCOPATE_HOST_CLOCK=tsc, whatever the kernel's clock source) or through the vDSO where asked
// (SYNCOPATE_HOST_CLOCK=system).
TEST(ProcessLifecycle, HostTimestampsAreTheSystemsMonotonicClockFromEitherSource) {
  for (const std::string choice : {"auto", "system", "tsc"}) {
    SCOPED_TRACE("SYNCOPATE_HOST_CLOCK=" + choice);
    TempDir dir;
    auto environment = workloadEnvironment(dir);
    environment["SYNCOPATE_HOST_CLOCK"] = choice;
    const std::int64_t before = steadyNs();
    ChildResult result = run({workloadProgram().string(), "--iterations", "5", "--sleep-ms", "20"}, environment,
                             std::chrono::seconds(60));
    const std::int64_t after = steadyNs();
    ASSERT_EQ(result.exit_code, 0) << result.err;
    auto stores = readRun(dir.path());
    ASSERT_EQ(stores.size(), 1u);
    const RecordedStore& store = stores.front();
    const bool tsc = (choice == "auto" && kernelKeepsTimeWithTheTsc()) || (choice == "tsc" && processorTscIsInvariant());
    EXPECT_EQ(store.meta.at("host_clock"), tsc ? "tsc" : "clock_gettime");
    ASSERT_FALSE(store.api_calls.empty());
    std::int64_t first = after;
    std::int64_t last = before;
    for (const ApiCall& call : store.api_calls) {
      EXPECT_LE(before, call.row.start_ns) << call.name;
      EXPECT_LE(call.row.start_ns, call.row.end_ns) << call.name;
      EXPECT_LE(call.row.end_ns, after) << call.name;
      first = std::min(first, call.row.start_ns);
      last = std::max(last, call.row.end_ns);
    }
    EXPECT_GE(last - first, 4 * 20'000'000) << "four sleeps of 20 ms lie between the first iteration's calls and the last's";
  }
}

TEST(ProcessLifecycle, SigkillLeavesTheStoreReadableUpToItsLastFlush) {
  TempDir dir;
  Child child({workloadProgram().string(), "--forever"}, workloadEnvironment(dir));
  // Let it run well past several flushes (every 100 ms), then kill it without warning.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (child.outSoFar().find("iteration 30 done") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  child.kill(SIGKILL);
  ChildResult result = child.wait(std::chrono::seconds(10));
  ASSERT_EQ(result.exit_code, 128 + SIGKILL);

  auto files = syncopate::trace::listStores(dir.path());
  ASSERT_TRUE(files.ok()) << files.message();
  ASSERT_EQ(files->size(), 1u);
  auto reader = syncopate::trace::StoreReader::open(files->front().path);
  ASSERT_TRUE(reader.ok()) << reader.message();
  EXPECT_TRUE(reader->checkIntegrity().ok());
  RecordedStore store = readStore(files->front().path);
  // At least the iterations printed before the last flush, as whole rows.
  int steps = 0;
  for (const NvtxRange& range : store.nvtx) steps += range.name.starts_with("ProfilerStep#") ? 1 : 0;
  EXPECT_GE(steps, 25);
  EXPECT_GE(store.count(OpKind::Kernel), 3 * 25);
  for (const Op& op : store.ops) EXPECT_GE(op.row.end_ns, op.row.start_ns);

  // `syncopate analyze` analyses it, and says it was never closed.
  ChildResult analyzed = run({(buildDir() / "bin" / "syncopate").string(), "analyze", "--no-save", dir.path().string()}, {},
                             std::chrono::seconds(60));
  EXPECT_EQ(analyzed.exit_code, 0) << analyzed.err;
  const std::string store_name = files->front().path.filename().string();
  EXPECT_NE(analyzed.out.find("[warning] " + store_name + ": the store of process " + std::to_string(child.pid()) +
                              " was never closed: its process ended without closing it (killed, or it crashed)"),
            std::string::npos)
      << analyzed.out;
}

TEST(ProcessLifecycle, AnUnusableDirectoryIsReportedAndTheJobRuns) {
  auto environment = recordingEnvironment({"/proc/syncopate-cannot-create-this", "events"});
  environment["SIMGPU_PROFILE"] = testProfile("workload").string();
  ChildResult result = run({workloadProgram().string(), "--iterations", "2"}, environment, std::chrono::seconds(60));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("workload_counts "), std::string::npos);
  EXPECT_NE(result.err.find("cannot create this process's store in /proc/syncopate-cannot-create-this"), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("the job continues"), std::string::npos) << result.err;
}

// A disk that fills up while recording: writes fail (here through a file size limit, which
// children inherit with SIGXFSZ ignored); the failure is reported once, the job finishes.
TEST(ProcessLifecycle, AFullDiskIsReportedAndTheJobRuns) {
  TempDir dir;
  struct rlimit previous {};
  getrlimit(RLIMIT_FSIZE, &previous);
  struct rlimit small = previous;
  // Room for the store to be created, not for what 2000 iterations write (simgpu's default
  // profile: short kernels, so the iterations go fast).
  small.rlim_cur = 1024 * 1024;
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  ChildResult result = run({workloadProgram().string(), "--iterations", "2000"},
                           recordingEnvironment({dir.path(), "cupti"}), std::chrono::seconds(120));
  setrlimit(RLIMIT_FSIZE, &previous);
  signal(SIGXFSZ, old_handler);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("workload_counts "), std::string::npos);
  EXPECT_NE(result.err.find("failed"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("recording goes on"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace collector_test
