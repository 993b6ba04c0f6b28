// A CUDA program recorded on simgpu with each timing backend: the store holds exactly what the
// program says it issued, named, sized and timed as simgpu modelled it, and both backends give
// the same rows.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/child_process.hpp"
#include "support/recorded_store.hpp"
#include "support/recording.hpp"

namespace collector_test {
namespace {

using syncopate::trace::MemcpyKind;
using syncopate::trace::OpKind;

constexpr int kIterations = 4;
constexpr std::int64_t kBusyKernelNs = 2'000'000;  // tests/collector/profiles/workload.json
constexpr std::int64_t kAddOneNs = 500'000;

struct WorkloadRun {
  ChildResult result;
  std::map<std::string, std::string> counts;
  RecordedStore store;
};

WorkloadRun recordWorkload(const TempDir& dir, const std::string& backend) {
  RecordingSetup setup{dir.path(), backend};
  auto environment = recordingEnvironment(setup);
  environment["SIMGPU_PROFILE"] = testProfile("workload").string();
  WorkloadRun recorded;
  recorded.result = run({workloadProgram().string(), "--iterations", std::to_string(kIterations)}, environment,
                        std::chrono::seconds(60));
  if (recorded.result.exit_code != 0) return recorded;
  recorded.counts = keyValues(recorded.result.out, "workload_counts ");
  auto stores = readRun(dir.path());
  if (stores.size() == 1) recorded.store = std::move(stores.front());
  return recorded;
}

class WorkloadRecording : public ::testing::TestWithParam<std::string> {};

TEST_P(WorkloadRecording, StoreHoldsExactlyWhatTheProgramIssued) {
  TempDir dir;
  WorkloadRun run = recordWorkload(dir, GetParam());
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  ASSERT_EQ(readRun(dir.path()).size(), 1u) << "one process used CUDA: one store";
  const RecordedStore& store = run.store;
  EXPECT_EQ(store.meta.at("backend"), GetParam());
  EXPECT_FALSE(store.meta.at("backend_reason").empty());

  EXPECT_EQ(store.count(OpKind::Kernel), countIn(run.counts, "kernels"));
  EXPECT_EQ(store.count(OpKind::Memcpy), countIn(run.counts, "memcpys"));
  EXPECT_EQ(store.count(OpKind::Memset), countIn(run.counts, "memsets"));
  EXPECT_EQ(store.count(OpKind::EventRecord), countIn(run.counts, "event_records"));
  EXPECT_EQ(store.count(OpKind::StreamWait), countIn(run.counts, "stream_waits"));
  EXPECT_EQ(store.count(OpKind::HostSync), countIn(run.counts, "stream_syncs") + countIn(run.counts, "device_syncs"));
  EXPECT_EQ(store.counter("records_dropped_buffer_full"), 0);
  EXPECT_EQ(store.counter("ops_untimed_no_timing_slot"), 0);
  EXPECT_EQ(store.counter("ops_untimed_timing_failed"), 0);

  // Kernels by name (demangled), from both launch paths, with their launch shape.
  int busy = 0;
  int add_one = 0;
  for (const Op* op : store.opsOf(OpKind::Kernel)) {
    if (op->name == "busy_kernel(float*, int, int)") ++busy;
    if (op->name == "add_one(float*, int)") ++add_one;
    ASSERT_TRUE(op->row.grid && op->row.block) << op->name;
    EXPECT_EQ(op->row.grid->x, 16u);
    EXPECT_EQ(op->row.block->x, 256u);
  }
  EXPECT_EQ(busy, kIterations);
  EXPECT_EQ(add_one, 2 * kIterations);

  // Copies with their size and direction.
  std::map<MemcpyKind, int> directions;
  for (const Op* op : store.opsOf(OpKind::Memcpy)) {
    EXPECT_EQ(op->row.bytes, 16384);
    ++directions[op->row.memcpy_kind.value_or(MemcpyKind::Unknown)];
  }
  EXPECT_EQ(directions[MemcpyKind::HostToDevice], kIterations);
  EXPECT_EQ(directions[MemcpyKind::DeviceToDevice], kIterations);
  EXPECT_EQ(directions[MemcpyKind::DeviceToHost], kIterations);

  // Every op has the host call that issued it, and did not start before that call did.
  std::map<std::int64_t, const ApiCall*> calls;
  for (const ApiCall& call : store.api_calls) {
    if (call.row.correlation_id) calls[*call.row.correlation_id] = &call;
  }
  for (const Op& op : store.ops) {
    ASSERT_TRUE(op.row.correlation_id) << op.name;
    auto call = calls.find(*op.row.correlation_id);
    ASSERT_NE(call, calls.end()) << op.name;
    EXPECT_GE(op.row.start_ns, call->second->row.start_ns) << op.name << " began before " << call->second->name;
    EXPECT_GE(op.row.end_ns, op.row.start_ns) << op.name;
  }
}

// How long the host call that issued `op` took. With the events backend a kernel's duration
// also counts the part of that call between its two timing events, where a loaded machine can
// take the host thread's core away for milliseconds.
std::int64_t issuingCallNs(const RecordedStore& store, const Op& op) {
  for (const ApiCall& call : store.api_calls)
    if (call.row.correlation_id == op.row.correlation_id) return call.row.end_ns - call.row.start_ns;
  ADD_FAILURE() << op.name << " has no issuing call";
  return 0;
}

TEST_P(WorkloadRecording, KernelDurationsAreSimgpusModel) {
  TempDir dir;
  WorkloadRun run = recordWorkload(dir, GetParam());
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  // CUPTI reports simgpu's modelled times themselves; CUDA events bracket the op on its stream,
  // so a kernel reaching an idle stream also counts the host's launch gap, which lies within the
  // issuing call.
  const bool events = GetParam() == "events";
  for (const Op* op : run.store.opsOf(OpKind::Kernel)) {
    const std::int64_t model = op->name.starts_with("busy_kernel") ? kBusyKernelNs : kAddOneNs;
    const std::int64_t duration = op->row.end_ns - op->row.start_ns;
    if (!events) {
      EXPECT_NEAR(static_cast<double>(duration), static_cast<double>(model), 1'000.0) << op->name;
      continue;
    }
    const std::int64_t tolerance = std::max<std::int64_t>(model / 20, 300'000);
    EXPECT_GE(duration, model - tolerance) << op->name;
    EXPECT_LE(duration, model + tolerance + issuingCallNs(run.store, *op)) << op->name;
  }
}

TEST_P(WorkloadRecording, NvtxRangesAndMarksAppear) {
  TempDir dir;
  WorkloadRun run = recordWorkload(dir, GetParam());
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  std::vector<std::string> steps;
  int phases = 0;
  int marks = 0;
  for (const NvtxRange& range : run.store.nvtx) {
    if (range.name.starts_with("ProfilerStep#")) {
      steps.push_back(range.name);
      EXPECT_EQ(range.row.depth, 0u);
    } else if (range.name == "forward" || range.name == "copy") {
      ++phases;
      EXPECT_EQ(range.row.depth, 1u);
    } else if (range.name == "copies issued") {
      ++marks;
      EXPECT_EQ(range.row.start_ns, range.row.end_ns);
    }
    EXPECT_LE(range.row.start_ns, range.row.end_ns);
  }
  std::sort(steps.begin(), steps.end());
  ASSERT_EQ(static_cast<int>(steps.size()), kIterations);
  for (int i = 0; i < kIterations; ++i) EXPECT_EQ(steps[static_cast<std::size_t>(i)], "ProfilerStep#" + std::to_string(i));
  EXPECT_EQ(phases + kIterations, countIn(run.counts, "nvtx_ranges"));
  EXPECT_EQ(marks, countIn(run.counts, "nvtx_marks"));
}

// A graph captured in global mode while recording: the capture still succeeds (the collector
// adds nothing to it and its own thread makes no forbidden call), captured ops are counted
// rather than recorded as ops, graph launches are recorded as host calls and counted.
TEST_P(WorkloadRecording, GraphCaptureIsNeverDisturbed) {
  TempDir dir;
  auto environment = recordingEnvironment({dir.path(), GetParam()});
  environment["SIMGPU_PROFILE"] = testProfile("workload").string();
  ChildResult result = run({workloadProgram().string(), "--iterations", "2", "--graph"}, environment, std::chrono::seconds(60));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("graph_captured_ops=3 graph_launches=2"), std::string::npos);
  auto counts = keyValues(result.out, "workload_counts ");
  auto stores = readRun(dir.path());
  ASSERT_EQ(stores.size(), 1u);
  const RecordedStore& store = stores.front();
  EXPECT_EQ(store.counter("ops_captured_into_graphs"), 3);
  EXPECT_EQ(store.counter("graph_launches"), 2);
  EXPECT_EQ(store.count(OpKind::Kernel), countIn(counts, "kernels"));
  EXPECT_EQ(store.count(OpKind::Memcpy), countIn(counts, "memcpys"));
  std::map<std::string, int> calls;
  for (const ApiCall& call : store.api_calls) ++calls[call.name];
  EXPECT_EQ(calls["cudaStreamBeginCapture"], 1);
  EXPECT_EQ(calls["cudaStreamEndCapture"], 1);
  EXPECT_EQ(calls["cudaGraphLaunch"], 2);
}

INSTANTIATE_TEST_SUITE_P(Backends, WorkloadRecording, ::testing::Values("events", "cupti"));

// The same program recorded with each backend: the same rows, in the same order, timed alike.
TEST(BothBackends, GiveTheSameRows) {
  TempDir events_dir;
  TempDir cupti_dir;
  WorkloadRun events = recordWorkload(events_dir, "events");
  WorkloadRun cupti = recordWorkload(cupti_dir, "cupti");
  ASSERT_EQ(events.result.exit_code, 0) << events.result.err;
  ASSERT_EQ(cupti.result.exit_code, 0) << cupti.result.err;
  auto byCorrelation = [](std::vector<Op> ops) {
    std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) {
      return a.row.correlation_id.value_or(0) < b.row.correlation_id.value_or(0);
    });
    return ops;
  };
  std::vector<Op> a = byCorrelation(events.store.ops);
  std::vector<Op> b = byCorrelation(cupti.store.ops);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(a[i].name + " / " + b[i].name);
    EXPECT_EQ(a[i].row.kind, b[i].row.kind);
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].row.correlation_id, b[i].row.correlation_id);
    EXPECT_EQ(a[i].row.stream_id, b[i].row.stream_id);
    EXPECT_EQ(a[i].row.bytes, b[i].row.bytes);
    EXPECT_EQ(a[i].row.memcpy_kind, b[i].row.memcpy_kind);
    EXPECT_EQ(a[i].row.grid, b[i].row.grid);
    EXPECT_EQ(a[i].row.block, b[i].row.block);
    EXPECT_EQ(a[i].row.sync_kind, b[i].row.sync_kind);
    if (a[i].row.kind == OpKind::Kernel) {
      double da = static_cast<double>(a[i].row.end_ns - a[i].row.start_ns);
      double db = static_cast<double>(b[i].row.end_ns - b[i].row.start_ns);
      // The events backend's duration also counts the host's launch gap (see above).
      const double launch_gap = static_cast<double>(issuingCallNs(events.store, a[i]));
      EXPECT_GE(da, db - std::max(0.05 * db, 300'000.0));
      EXPECT_LE(da, db + std::max(0.05 * db, 300'000.0) + launch_gap);
    }
  }
  EXPECT_EQ(events.store.nvtx.size(), cupti.store.nvtx.size());
  // The same pointer arguments of the same ops (addresses differ from run to run).
  auto argumentShape = [](const RecordedStore& store) {
    std::vector<std::pair<std::int64_t, std::uint32_t>> shape;
    for (const auto& arg : store.op_args) shape.emplace_back(arg.correlation_id, arg.arg_index);
    std::sort(shape.begin(), shape.end());
    return shape;
  };
  EXPECT_EQ(argumentShape(events.store), argumentShape(cupti.store));
  EXPECT_FALSE(argumentShape(cupti.store).empty());
}

}  // namespace
}  // namespace collector_test
