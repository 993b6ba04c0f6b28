// Worker threads that call CUDA while the main thread's first call starts the recorder
// (NVIDIA's simpleCallback does this): every call of every thread is recorded — their devices,
// streams, allocations and frees — so that nothing is freed that was not allocated.
#include <gtest/gtest.h>

#include <map>

#include "support/child_process.hpp"
#include "support/recorded_store.hpp"
#include "support/recording.hpp"

namespace collector_test {
namespace {

using syncopate::trace::OpKind;

TEST(WorkerThreads, CallsMadeWhileTheRecorderStartsAreRecorded) {
  TempDir dir;
  auto environment = recordingEnvironment({dir.path(), "events"});
  environment["SIMGPU_PROFILE"] = testProfile("workload").string();
  ChildResult result = run({(buildDir() / "bin" / "collector_worker_threads").string(), "--threads", "8"}, environment,
                           std::chrono::seconds(60));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto counts = keyValues(result.out, "worker_counts ");
  ASSERT_FALSE(counts.empty()) << result.out;
  auto stores = readRun(dir.path());
  ASSERT_EQ(stores.size(), 1u);
  const RecordedStore& store = stores.front();

  std::map<std::string, int> calls;
  for (const ApiCall& call : store.api_calls) ++calls[call.name];
  EXPECT_EQ(calls["cudaSetDevice"], countIn(counts, "set_devices"));
  EXPECT_EQ(calls["cudaStreamCreate"], countIn(counts, "stream_creates"));
  EXPECT_EQ(calls["cudaMalloc"], countIn(counts, "mallocs"));
  EXPECT_EQ(calls["cudaFree"], countIn(counts, "frees"));
  EXPECT_EQ(static_cast<int>(store.allocations.size()), countIn(counts, "mallocs"));
  for (const auto& allocation : store.allocations) EXPECT_TRUE(allocation.free_ns.has_value()) << "never freed?";
  EXPECT_EQ(store.counter("frees_without_alloc"), 0);
  EXPECT_EQ(store.count(OpKind::Kernel), countIn(counts, "kernels"));
  // One stream per worker (plus the legacy default stream of the main thread's frees).
  int worker_streams = 0;
  for (const auto& stream : store.streams) worker_streams += stream.handle.value_or(0) > 2 ? 1 : 0;
  EXPECT_EQ(worker_streams, countIn(counts, "stream_creates"));
}

}  // namespace
}  // namespace collector_test
