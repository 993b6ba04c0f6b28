// The critical paths of real traces whose host synchronises with the GPU, imported from
// ../shared/traces (Kineto: HTA's critical_path test traces and triton_example; Nsight: the
// CloverLeaf export). Each expected path was derived by hand from the trace's events (listed
// with their times, streams and correlation ids) and what each sync waits for:
//   Stream Sync    the last op issued to its stream before the call;
//   Context Sync   the last op of any stream of the device that ended by the call's return;
//   Event Sync     the ops issued to the recording stream before the cudaEventRecord it names;
//   a copy to or from pageable memory returns when the copy has ended.
// A blocking call is sync time from the end of the op it waited for to its return, and host
// time where that op had ended before the call began; a GPU op waits for the later of the op
// before it on its stream and the start of the call that launched it (HTA's launch edge).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "scratch_dir.hpp"
#include "shared_traces.hpp"
#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/importers.hpp"
#include "syncopate/analyzer/run_loader.hpp"

namespace syncopate::analyzer {
namespace {

using testing::ScratchDir;

struct Imported {
  ScratchDir dir;
  ImportReport report;
  RunModel model;
  Analysis analysis;
};

// Imports `relative` (under tracesDir()) with the importer of its kind, loads and analyses it.
void importAndAnalyse(const std::string& relative, Imported& out) {
  ASSERT_TRUE(testing::tracesPresent(relative));
  const std::filesystem::path file = testing::tracesDir() / relative;
  auto report = file.extension() == ".sqlite" ? importNsys(std::span(&file, 1), out.dir / "run")
                                              : importKineto(std::span(&file, 1), out.dir / "run");
  ASSERT_TRUE(report.ok()) << report.message();
  out.report = std::move(*report);
  auto m = loadRun(out.dir / "run");
  ASSERT_TRUE(m.ok()) << m.message();
  out.model = std::move(*m);
  auto a = analyze(out.model);
  ASSERT_TRUE(a.ok()) << a.message();
  out.analysis = std::move(*a);
}

std::string nodeName(const RunModel& m, NodeRef n) {
  switch (n.kind()) {
    case NodeRef::Kind::Op: return std::string(m.str(m.ops.name[n.index()]));
    case NodeRef::Kind::ApiCall: return std::string(m.str(m.api_calls.name[n.index()]));
    case NodeRef::Kind::HostSync: return "host sync";
  }
  return "?";
}

// One line per segment: category, node name (cut at 40 characters), its span in microseconds
// from the path's start, and "(before)" for time spent waiting before the node started.
std::vector<std::string> describe(const RunModel& m, const CriticalPath& p) {
  std::vector<std::string> out;
  for (const PathSegment& s : p.segments) {
    char span[64];
    std::snprintf(span, sizeof span, "%.3f-%.3f", static_cast<double>(s.start - p.start) / 1e3,
                  static_cast<double>(s.end - p.start) / 1e3);
    out.push_back(std::string(toString(s.category)) + " " + nodeName(m, s.node).substr(0, 40) + " " + span +
                  (s.waiting ? " (before)" : ""));
  }
  return out;
}

// The lengths (ns) of the path's segments of category `c` inside calls named `call`.
std::vector<std::int64_t> segmentsIn(const RunModel& m, const CriticalPath& p, std::string_view call, PathCategory c) {
  std::vector<std::int64_t> out;
  for (const PathSegment& s : p.segments)
    if (s.node.kind() == NodeRef::Kind::ApiCall && !s.waiting && s.category == c &&
        m.str(m.api_calls.name[s.node.index()]) == call)
      out.push_back(s.end - s.start);
  return out;
}

std::size_t eventWaitFlows(const RunModel& m) {
  std::size_t n = 0;
  for (Index e = 0; e < m.flows.size(); ++e) n += m.flows.kind(e) == FlowKind::EventWait;
  return n;
}

Index opNamed(const RunModel& m, std::string_view prefix) {
  for (Index op = 0; op < m.ops.size(); ++op)
    if (m.str(m.ops.name[op]).starts_with(prefix)) return op;
  return kNone;
}

// The CloverLeaf mini-app launches each kernel and calls cudaDeviceSynchronize after it, on one
// stream: the host waits out every kernel. Nsight labels its 1 312 synchronisation records
// "event synchronize" with neither event nor stream; they are the device syncs of the calls
// they belong to. The path is the kernels, one after another, each joined to the next by the
// device sync that waited for it and the launch after that sync. 1 310 calls' last op ended
// while they blocked: each is sync time from that op's end to its return (2 927 235 ns in all,
// summed from the export's CUPTI_ACTIVITY_KIND_RUNTIME, _KERNEL and _MEMCPY rows). Two kernels
// (4 672 and 4 449 ns) ran and ended inside their own launch calls, before their syncs began:
// those syncs are host time, and the host's launch call, not the kernel, set when they began
// (a faster kernel would not have moved them), so those two kernels are off the path and the
// other 1 310 are on it whole: 294 404 540 ns of kernels in all, less 9 121.
TEST(ImportedSyncPaths, CloverLeafPathIsTheKernelsTheHostWaitedFor) {
  Imported r;
  importAndAnalyse("nsys/cloverleaf/perlmutter-cloverleaf-cuda.sqlite", r);
  const RunModel& m = r.model;
  ASSERT_EQ(m.host_syncs.size(), 1312u);
  for (Index h = 0; h < m.host_syncs.size(); ++h) {
    ASSERT_EQ(m.host_syncs.sync_kind[h], trace::SyncKind::Device) << h;
    ASSERT_EQ(m.str(m.api_calls.name[m.host_syncs.api_call[h]]), "cudaDeviceSynchronize") << h;
  }
  ASSERT_EQ(r.analysis.critical_paths.size(), 1u);
  const CriticalPath& p = r.analysis.critical_paths[0];
  EXPECT_EQ(p.length(), 342407810);  // first op's start to last op's end
  EXPECT_EQ(p.attributed(PathCategory::Compute), 294404540 - 4672 - 4449);
  EXPECT_GT(2 * p.attributed(PathCategory::Compute), p.length());
  const std::vector<std::int64_t> synced = segmentsIn(m, p, "cudaDeviceSynchronize", PathCategory::Sync);
  EXPECT_EQ(synced.size(), 1310u);
  std::int64_t synced_ns = 0;
  for (std::int64_t ns : synced) synced_ns += ns;
  EXPECT_EQ(synced_ns, 2927235);
  std::size_t host_segments = 0;
  for (const PathSegment& s : p.segments) {
    if (s.node.kind() != NodeRef::Kind::ApiCall || s.waiting || s.category != PathCategory::Host ||
        m.str(m.api_calls.name[s.node.index()]) != "cudaDeviceSynchronize")
      continue;
    ++host_segments;
    for (Index op = 0; op < m.ops.size(); ++op)
      EXPECT_FALSE(m.ops.kind[op] == trace::OpKind::Kernel && m.ops.start[op] < s.end && m.ops.end[op] > s.start)
          << "cudaDeviceSynchronize is host time on the path while kernel " << op << " ran";
  }
  EXPECT_EQ(host_segments, 2u);  // the two calls whose last op had ended before they began
}

// HTA's cuda_event_sync trace, ProfilerStep#100 (times in us from the step's start): aten::ones
// (570-2815) launches a fill kernel (2810-2811), then a sum (2859-2870) and a gt kernel
// (2900-2901); .item() copies to pageable memory (call 2917-2946, copy 2935-2937) and calls
// cudaStreamSynchronize (2947-2953), cudaEventRecord (3017-3020), a spin kernel (launch
// 3027-3036, kernel 3037-3073), another cudaEventRecord (3041-3044) and cudaEventSynchronize
// (3047-3081) on it. The step's last GPU op is the spin kernel, so the path is [570, 3073]:
// the spin kernel and its launch, the host work back to the stream sync, which waited for
// nothing (its copy had ended at 2937, before the call) and is host time, the copy's call,
// which returned 9 us after its copy ended (sync), the copy and its launch; before that the
// host's launches, each a plain call (a kernel launch does not wait for its kernel, even
// the fill kernel that ended with its 36 us launch call), back to the step's first op's range.
// The event sync waits for the spin kernel: its record is derived at the kernel's end.
TEST(ImportedSyncPaths, CudaEventSync) {
  Imported r;
  importAndAnalyse("kineto/critical_path/cuda_event_sync/event_sync_trace.json.gz", r);
  ASSERT_EQ(r.analysis.critical_paths.size(), 1u);
  const CriticalPath& p = r.analysis.critical_paths[0];
  EXPECT_EQ(p.iteration, 100);
  EXPECT_EQ(describe(r.model, p), (std::vector<std::string>{
                                      "host cudaLaunchKernel 0.000-2205.000 (before)",
                                      "host cudaLaunchKernel 2205.000-2241.000",
                                      "host cudaLaunchKernel 2241.000-2277.000 (before)",
                                      "host cudaLaunchKernel 2277.000-2287.000",
                                      "host cudaLaunchKernel 2287.000-2316.000 (before)",
                                      "host cudaLaunchKernel 2316.000-2328.000",
                                      "host cudaMemcpyAsync 2328.000-2347.000 (before)",
                                      "launch Memcpy DtoH (Device -> Pageable) 2347.000-2365.000 (before)",
                                      "memory Memcpy DtoH (Device -> Pageable) 2365.000-2367.000",
                                      "sync cudaMemcpyAsync 2367.000-2376.000",
                                      "host cudaStreamSynchronize 2376.000-2377.000 (before)",
                                      "host cudaStreamSynchronize 2377.000-2383.000",
                                      "host cudaEventRecord 2383.000-2447.000 (before)",
                                      "host cudaEventRecord 2447.000-2450.000",
                                      "host cudaLaunchKernel 2450.000-2457.000 (before)",
                                      "launch at::cuda::(anonymous namespace)::spin_ke 2457.000-2467.000 (before)",
                                      "compute at::cuda::(anonymous namespace)::spin_ke 2467.000-2503.000",
                                  }));
  const RunModel& m = r.model;
  const Index spin = opNamed(m, "at::cuda::(anonymous namespace)::spin_kernel");
  ASSERT_NE(spin, kNone);
  std::size_t records_at_spin_end = 0;
  for (Index op = 0; op < m.ops.size(); ++op)
    records_at_spin_end += m.ops.kind[op] == trace::OpKind::EventRecord && m.ops.start[op] == m.ops.end[spin];
  EXPECT_EQ(records_at_spin_end, 1u);
}

// HTA's cuda_event_sync_multi_stream trace: three matmuls, each a memset and an sgemm on its own
// stream (20, 28, 24), found as three iterations by their repeating pattern (times in us from
// the first matmul's start). 0: the sgemm on stream 20 (444-567) waited for its launch call
// (414-445; the memset before it ended at 412), and the launch for the host's CPU work since
// the call before (from 410, cut at the window's start, 411). 1 and 2: the memset (825-826,
// and 19778-19779) ended after the sgemm's launch call began (825, 19779), so the memset is the
// sgemm's last predecessor and the 15 us until the sgemm started have no recorded reason
// (idle). The stream wait of stream 24 for the event recorded on stream 20 at 19410 is before
// iteration 2's ops and did not hold them: stream 20 had finished at 567.
TEST(ImportedSyncPaths, CudaEventSyncMultiStream) {
  Imported r;
  importAndAnalyse("kineto/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz", r);
  ASSERT_EQ(r.analysis.critical_paths.size(), 3u);
  EXPECT_EQ(describe(r.model, r.analysis.critical_paths[0]), (std::vector<std::string>{
                                                                 "host cudaLaunchKernel 0.000-3.000 (before)",
                                                                 "launch ampere_sgemm_128x64_nn 3.000-33.000 (before)",
                                                                 "compute ampere_sgemm_128x64_nn 33.000-156.000",
                                                             }));
  for (std::size_t i : {1u, 2u})
    EXPECT_EQ(describe(r.model, r.analysis.critical_paths[i]), (std::vector<std::string>{
                                                                   "memory Memset (Device) 0.000-1.000",
                                                                   "idle ampere_sgemm_128x64_nn 1.000-16.000 (before)",
                                                                   "compute ampere_sgemm_128x64_nn 16.000-139.000",
                                                               }))
        << "iteration " << i;
  // The one stream wait depends on its record, on stream 20, at its cudaEventRecord call's start.
  ASSERT_EQ(eventWaitFlows(r.model), 1u);
  const RunModel& m = r.model;
  for (Index e = 0; e < m.flows.size(); ++e) {
    if (m.flows.kind(e) != FlowKind::EventWait) continue;
    const Index record = m.flows.src(e).index();
    EXPECT_EQ(m.streams[m.ops.stream[record]].handle, 20u);
    const Index call = m.ops.launch[record];
    ASSERT_NE(call, kNone);
    EXPECT_EQ(m.str(m.api_calls.name[call]), "cudaEventRecord");
    EXPECT_EQ(m.ops.start[record], m.api_calls.start[call]);
  }
  // The first Event Sync (of cudaEventQuery, at 370 us) names event 9 but no record call: none
  // of event 9 was issued before it, and the analysis says so.
  std::int64_t unmatched = 0;
  for (const auto& d : m.diagnostics)
    if (d.message.starts_with("host syncs on an event whose record is not in the recording")) unmatched += d.count;
  EXPECT_EQ(unmatched, 1);
}

// HTA's simple_add and alexnet traces (no step markers: the whole trace is one iteration, from
// the first GPU op's start to the last one's end): the host copies 16 inputs to the GPU from
// pageable memory, each followed by cudaStreamSynchronize on stream 7; cudnn/cublas kernels
// follow on streams 7 and 20-27 joined by stream waits; cudaDeviceSynchronize (Context Sync)
// calls come where the GPU had finished. Each stream sync's copy ended while it blocked: the
// path enters each copy through its sync, which is sync time from the copy's end to the call's
// return (the durations below, in us, read from the trace's cuda_runtime and gpu_memcpy
// events). No device sync is sync time: each one's last kernel had ended before the call, or
// the call came after the path's last op. No call that does not block the host (kernel
// launches, cudaStreamWaitEvent, cudaEventQuery) is sync time.
void expectCopiesJoinedByStreamSyncs(const std::string& trace, std::int64_t length_us,
                                     const std::vector<std::int64_t>& sync_us, std::size_t stream_waits) {
  Imported r;
  importAndAnalyse(trace, r);
  ASSERT_EQ(r.analysis.critical_paths.size(), 1u);
  const CriticalPath& p = r.analysis.critical_paths[0];
  EXPECT_EQ(p.length(), length_us * 1000);
  std::vector<std::int64_t> expected;
  for (std::int64_t us : sync_us) expected.push_back(us * 1000);
  EXPECT_EQ(segmentsIn(r.model, p, "cudaStreamSynchronize", PathCategory::Sync), expected);
  for (const char* call : {"cudaDeviceSynchronize", "cudaLaunchKernel", "cudaStreamWaitEvent", "cudaEventQuery"})
    EXPECT_TRUE(segmentsIn(r.model, p, call, PathCategory::Sync).empty()) << call;
  EXPECT_EQ(eventWaitFlows(r.model), stream_waits);
}

TEST(ImportedSyncPaths, SimpleAdd) {
  expectCopiesJoinedByStreamSyncs("kineto/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
                                  16025575, {9, 6, 8, 6, 6, 5, 7, 4, 7, 6, 8, 4, 9, 5, 7, 8}, 20);
}

TEST(ImportedSyncPaths, Alexnet) {
  expectCopiesJoinedByStreamSyncs("kineto/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
                                  12920244, {7, 5, 6, 5, 7, 4, 7, 5, 6, 4, 8, 5, 7, 4, 8, 3}, 20);
}

// triton_example: ProfilerStep#1 holds one torch.compile region (from 353872.695 us) whose
// Triton kernel is launched through the driver (cuLaunchKernel 355130.067-355177.835) and runs
// for 1.760 us (355175.493-355177.253). The path starts where the host work that issued the
// step's only op began, the compiled region, not at the kernel: it is that region's host work,
// the launch, and the kernel.
TEST(ImportedSyncPaths, TritonExampleThroughTheDriver) {
  Imported r;
  importAndAnalyse("kineto/triton_example/triton_example.json.gz", r);
  ASSERT_EQ(r.analysis.critical_paths.size(), 1u);
  EXPECT_EQ(describe(r.model, r.analysis.critical_paths[0]),
            (std::vector<std::string>{
                "host cuLaunchKernel 0.000-1257.372 (before)",
                "launch triton_poi_fused_add_cos_sin_0 1257.372-1302.798 (before)",
                "compute triton_poi_fused_add_cos_sin_0 1302.798-1304.558",
            }));
}

}  // namespace
}  // namespace syncopate::analyzer
