// Managed memory, a memory pool and a graph built by hand, recorded with each timing backend
// (tests/collector/programs/memory_graph_workload.cu): the store holds exactly the program's
// calls, its three allocations with their kinds, sizes, addresses and frees, the graph's two
// launches counted, and no op but the one host synchronisation (prefetches, attachments and
// the graph's nodes are not ops the collector records).
#include <gtest/gtest.h>

#include <cstdlib>

#include "support/child_process.hpp"
#include "support/recorded_store.hpp"
#include "support/recording.hpp"

namespace collector_test {
namespace {

using syncopate::trace::AllocKind;
using syncopate::trace::OpKind;

class MemoryGraphRecording : public ::testing::TestWithParam<std::string> {};

TEST_P(MemoryGraphRecording, StoreHoldsExactlyTheCallsAndAllocations) {
  TempDir dir;
  auto environment = recordingEnvironment({dir.path(), GetParam()});
  environment["SIMGPU_PROFILE"] = testProfile("workload").string();
  const ChildResult result =
      run({(buildDir() / "bin" / "collector_memory_graph_workload").string()}, environment, std::chrono::seconds(60));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto printed = keyValues(result.out, "memory_graph_workload ");
  ASSERT_EQ(printed.size(), 3u) << result.out;
  auto stores = readRun(dir.path());
  ASSERT_EQ(stores.size(), 1u);
  const RecordedStore& store = stores.front();

  std::vector<std::string> calls;
  for (const ApiCall& call : store.api_calls) {
    calls.push_back(call.name);
    EXPECT_EQ(call.row.result, 0) << call.name;
  }
  const std::vector<std::string> expected = {
      "cudaStreamCreate",        "cudaMallocManaged",       "cudaMemAdvise",          "cudaStreamAttachMemAsync",
      "cudaMemPrefetchAsync",    "cudaMemPoolCreate",       "cudaMemPoolSetAttribute", "cudaMallocFromPoolAsync",
      "cudaMallocAsync",         "cudaGraphCreate",         "cudaGraphAddMemsetNode", "cudaGraphAddKernelNode",
      "cudaGraphAddMemcpyNode1D", "cudaGraphInstantiate",   "cudaGraphUpload",        "cudaGraphLaunch",
      "cudaGraphLaunch",         "cudaFreeAsync",           "cudaFreeAsync",          "cudaStreamSynchronize",
      "cudaDeviceSetLimit",      "cudaGraphExecDestroy",    "cudaGraphDestroy",       "cudaMemPoolTrimTo",
      "cudaMemPoolDestroy",      "cudaFree",                "cudaStreamDestroy"};
  EXPECT_EQ(calls, expected);

  struct Expected {
    const char* address;
    AllocKind kind;
    std::uint64_t bytes;
  };
  const Expected allocations[] = {{"managed", AllocKind::Managed, 1 << 20},
                                  {"pool_block", AllocKind::Async, 256 << 10},
                                  {"async_block", AllocKind::Async, 64 << 10}};
  ASSERT_EQ(store.allocations.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const syncopate::trace::AllocationRow& row = store.allocations[i];
    SCOPED_TRACE(allocations[i].address);
    EXPECT_EQ(row.address, std::strtoull(printed.at(allocations[i].address).c_str(), nullptr, 10));
    EXPECT_EQ(row.kind, allocations[i].kind);
    EXPECT_EQ(row.bytes, allocations[i].bytes);
    EXPECT_EQ(row.device_id, 0);
    ASSERT_TRUE(row.free_ns.has_value());
    EXPECT_GE(*row.free_ns, row.alloc_ns);
  }

  ASSERT_EQ(store.ops.size(), 1u);
  EXPECT_EQ(store.ops.front().row.kind, OpKind::HostSync);
  EXPECT_EQ(store.counter("graph_launches"), 2);
  EXPECT_EQ(store.counter("ops_captured_into_graphs"), 0);
  EXPECT_EQ(store.counter("records_dropped_buffer_full"), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, MemoryGraphRecording, ::testing::Values("events", "cupti"));

}  // namespace
}  // namespace collector_test
