// Armed recording: processes load the collector dormant and record nothing until
// `syncopate attach` asks; then every armed process records exactly the same N iterations.
// Attach/detach cycles leak neither memory nor file descriptors.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "support/child_process.hpp"
#include "support/recorded_store.hpp"
#include "support/recording.hpp"
#include "syncopate/collector/attach.hpp"
#include "syncopate/collector/control_files.hpp"
#include "syncopate/trace/run_dir.hpp"

namespace collector_test {
namespace {

namespace collector = syncopate::collector;
using syncopate::trace::OpKind;

std::map<std::string, std::string> armedEnvironment(const TempDir& dir) {
  auto environment = recordingEnvironment({dir.path(), "events", /*armed=*/true});
  environment["SIMGPU_PROFILE"] = testProfile("workload").string();
  return environment;
}

// Waits until `count` armed processes have published a status with an iteration.
bool waitForArmed(const TempDir& dir, std::size_t count) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    std::vector<std::string> problems;
    auto statuses = collector::readStatuses(dir.path() / collector::kControlDirectoryName, problems);
    std::size_t ready = 0;
    for (const auto& status : statuses) ready += status.state == "armed" && status.iteration >= 2 ? 1 : 0;
    if (ready >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::vector<std::int64_t> recordedSteps(const RecordedStore& store) {
  std::vector<std::int64_t> steps;
  for (const NvtxRange& range : store.nvtx) {
    if (range.name.starts_with("ProfilerStep#")) steps.push_back(std::stoll(range.name.substr(13)));
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

// A process reports "done" only once what it recorded is committed: the store is complete as
// soon as attach returns.
RecordedStore settledStore(const TempDir& dir, pid_t pid) {
  return readStore(dir.path() / syncopate::trace::pidStoreName(pid));
}

long statusValue(pid_t pid, const std::string& key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stol(line.substr(key.size() + 1));
  }
  return -1;
}

// The least number of descriptors the process held over ten looks 20 ms apart: its control
// channel opens one for a moment each time it reads a request or publishes its status (at every
// new iteration, here every 10 ms), which a single look can catch; a descriptor leaked stays in
// every look.
long openFiles(pid_t pid) {
  long least = -1;
  for (int look = 0; look < 10; ++look) {
    long count = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
      ++count;
    }
    least = least < 0 ? count : std::min(least, count);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return least;
}

void expectExactIterations(const RecordedStore& store, const std::vector<std::int64_t>& steps, int iterations) {
  ASSERT_EQ(static_cast<int>(steps.size()), iterations);
  for (std::size_t i = 1; i < steps.size(); ++i) EXPECT_EQ(steps[i], steps[0] + static_cast<std::int64_t>(i));
  // The workload issues, per iteration: 3 kernels, 3 copies, 1 fill, 1 event record, 1 wait, 1 sync.
  EXPECT_EQ(store.count(OpKind::Kernel), 3 * iterations);
  EXPECT_EQ(store.count(OpKind::Memcpy), 3 * iterations);
  EXPECT_EQ(store.count(OpKind::Memset), iterations);
  EXPECT_EQ(store.count(OpKind::EventRecord), iterations);
  EXPECT_EQ(store.count(OpKind::StreamWait), iterations);
  EXPECT_EQ(store.count(OpKind::HostSync), iterations);
}

TEST(ArmedRecording, NothingUntilAttachedThenExactlyTheRequestedIterations) {
  TempDir dir;
  Child child({workloadProgram().string(), "--forever", "--sleep-ms", "20"}, armedEnvironment(dir));
  ASSERT_TRUE(waitForArmed(dir, 1)) << child.outSoFar();
  auto stores = syncopate::trace::listStores(dir.path());
  ASSERT_TRUE(stores.ok());
  EXPECT_TRUE(stores->empty()) << "an armed process that was never attached has no store";

  auto outcome = collector::attach(dir.path(), {3, 0.0, 120.0}, nullptr);
  ASSERT_TRUE(outcome.ok()) << outcome.message();
  ASSERT_EQ(outcome->processes.size(), 1u);
  EXPECT_EQ(outcome->processes.front().state, "done");
  EXPECT_EQ(outcome->processes.front().recorded_iterations, 3);
  RecordedStore store = settledStore(dir, child.pid());
  std::vector<std::int64_t> steps = recordedSteps(store);
  expectExactIterations(store, steps, 3);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.front(), outcome->first_iteration);
  EXPECT_EQ(store.meta.at("recording_mode"), "armed");
}

// With CUPTI, an armed process collects no GPU activity while dormant (CUPTI's tracing of every
// call and kernel is what being armed cost a launch on a real GPU: +0.7 to +2.3 us) and
// collects it again for each window: every op of every window is timed, the last ones of a window
// included (collection stops only once they all have their times).
TEST(ArmedRecording, WithCuptiEveryWindowIsTimedWhole) {
  TempDir dir;
  auto environment = recordingEnvironment({dir.path(), "cupti", /*armed=*/true});
  environment["SIMGPU_PROFILE"] = testProfile("workload").string();
  environment["SYNCOPATE_LOG"] = "debug";
  Child child({workloadProgram().string(), "--forever", "--sleep-ms", "10"}, environment);
  ASSERT_TRUE(waitForArmed(dir, 1)) << child.outSoFar();
  for (int window = 1; window <= 3; ++window) {
    auto outcome = collector::attach(dir.path(), {2, 0.0, 120.0}, nullptr);
    ASSERT_TRUE(outcome.ok()) << "window " << window << ": " << outcome.message();
    // Dormant between windows (collection stops 100 ms after a window settled): the workload
    // keeps issuing, nothing of it is recorded or traced.
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
  }
  RecordedStore store = settledStore(dir, child.pid());
  child.kill(SIGTERM);
  const ChildResult ended = child.wait(std::chrono::seconds(60));
  auto occurrences = [&](const std::string& text) {
    int n = 0;
    for (auto at = ended.err.find(text); at != std::string::npos; at = ended.err.find(text, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(occurrences("GPU timing (cupti) stops collecting"), 4) << "armed, then after each window\n" << ended.err;
  EXPECT_EQ(occurrences("GPU timing (cupti) collects"), 3) << "once per window\n" << ended.err;
  EXPECT_EQ(store.meta.at("backend"), "cupti");
  EXPECT_EQ(static_cast<int>(recordedSteps(store).size()), 6);
  EXPECT_EQ(store.count(OpKind::Kernel), 3 * 6);
  EXPECT_EQ(store.count(OpKind::Memcpy), 3 * 6);
  for (const char* counter : {"ops_untimed_timing_failed", "ops_untimed_no_timing_slot", "ops_without_gpu_activity"}) {
    EXPECT_EQ(store.counter(counter), 0) << counter;
  }
  for (const Op& op : store.ops) {
    if (op.row.kind != OpKind::Kernel) continue;
    EXPECT_LT(op.row.start_ns, op.row.end_ns) << op.name << ": timed by CUPTI";
  }
}

TEST(ArmedRecording, AttachDetachCyclesLeakNothing) {
  TempDir dir;
  Child child({workloadProgram().string(), "--forever", "--sleep-ms", "10"}, armedEnvironment(dir));
  ASSERT_TRUE(waitForArmed(dir, 1)) << child.outSoFar();
  constexpr int kCycles = 6;
  long rss_after_first = 0;
  long files_after_first = 0;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    auto outcome = collector::attach(dir.path(), {2, 0.0, 120.0}, nullptr);
    ASSERT_TRUE(outcome.ok()) << "cycle " << cycle << ": " << outcome.message();
    EXPECT_EQ(static_cast<int>(recordedSteps(settledStore(dir, child.pid())).size()), 2 * (cycle + 1));
    if (cycle == 0) {
      rss_after_first = statusValue(child.pid(), "VmRSS");
      files_after_first = openFiles(child.pid());
    }
  }
  RecordedStore store = settledStore(dir, child.pid());
  EXPECT_EQ(static_cast<int>(recordedSteps(store).size()), 2 * kCycles);
  EXPECT_EQ(store.count(OpKind::Kernel), 3 * 2 * kCycles);
  // Once the first cycle has created the store and its buffers, later cycles add nothing.
  EXPECT_EQ(openFiles(child.pid()), files_after_first);
  EXPECT_LT(statusValue(child.pid(), "VmRSS") - rss_after_first, 4096) << "kB grown over " << kCycles - 1 << " cycles";
}

TEST(ArmedRecording, EveryArmedProcessStartsAtTheSameIteration) {
  TempDir dir;
  // Two processes at different speeds, both armed into one run.
  Child fast({workloadProgram().string(), "--forever", "--sleep-ms", "5"}, armedEnvironment(dir));
  Child slow({workloadProgram().string(), "--forever", "--sleep-ms", "40"}, armedEnvironment(dir));
  ASSERT_TRUE(waitForArmed(dir, 2));
  auto outcome = collector::attach(dir.path(), {4, 0.0, 120.0}, nullptr);
  ASSERT_TRUE(outcome.ok()) << outcome.message();
  ASSERT_EQ(outcome->processes.size(), 2u);
  RecordedStore fast_store = settledStore(dir, fast.pid());
  RecordedStore slow_store = readStore(dir.path() / syncopate::trace::pidStoreName(slow.pid()));
  std::vector<std::int64_t> fast_steps = recordedSteps(fast_store);
  std::vector<std::int64_t> slow_steps = recordedSteps(slow_store);
  expectExactIterations(fast_store, fast_steps, 4);
  expectExactIterations(slow_store, slow_steps, 4);
  EXPECT_EQ(fast_steps, slow_steps);
}

TEST(ArmedRecording, SecondsRecordsForThatLong) {
  TempDir dir;
  Child child({workloadProgram().string(), "--forever", "--sleep-ms", "10"}, armedEnvironment(dir));
  ASSERT_TRUE(waitForArmed(dir, 1));
  auto outcome = collector::attach(dir.path(), {0, 0.5, 120.0}, nullptr);
  ASSERT_TRUE(outcome.ok()) << outcome.message();
  RecordedStore store = settledStore(dir, child.pid());
  ASSERT_FALSE(store.ops.empty());
  std::int64_t first = store.ops.front().row.start_ns;
  std::int64_t last = first;
  for (const Op& op : store.ops) {
    first = std::min(first, op.row.start_ns);
    last = std::max(last, op.row.end_ns);
  }
  EXPECT_GT(last - first, 300'000'000);
  EXPECT_LT(last - first, 1'500'000'000);
}

TEST(ArmedRecording, AttachExplainsWhatIsWrong) {
  TempDir dir;
  auto none = collector::attach(dir.path(), {3, 0.0, 5.0}, nullptr);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.message().find("has no armed processes"), std::string::npos) << none.message();
  auto both = collector::attach(dir.path(), {3, 1.0, 5.0}, nullptr);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.code(), syncopate::trace::StatusCode::InvalidArgument);
}

}  // namespace
}  // namespace collector_test
