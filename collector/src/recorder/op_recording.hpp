// The recording of one intercepted call, whatever its API family: the host
// call (ApiCallRecord) and, when it issued GPU work, the op with its timing ticket (a pending
// OpRecord) and its pointer arguments (OpArgsRecord). Everything is pushed to the thread's
// ring at once, after the real call returned.
#pragma once

#include <cstdint>

#include "common/clock.hpp"
#include "syncopate/dispatch/launch_touches.hpp"
#include "recorder/recorder.hpp"
#include "syncopate/collector/stream_order.hpp"

namespace syncopate::preload {

// What a launch, copy or fill says about the op it issues: the few CallFacts fields issuedOp()
// reads, copied out so that the generated wrapper's CallFacts never leaves it (the compiler
// then keeps only the fields that are read, instead of building the whole struct per call).
struct IssueFacts {
  CallClass what = CallClass::Launch;
  // Launch: how the kernel is named, the shape and the arguments.
  const void* kernel_stub = nullptr;
  cudaKernel_t kernel_handle = nullptr;
  CUfunction kernel_function = nullptr;
  dim3 grid{1, 1, 1};
  dim3 block{1, 1, 1};
  void** kernel_args = nullptr;
  void** kernel_extra = nullptr;
  // Copy, Fill.
  std::uint64_t bytes = 0;
  trace::MemcpyKind copy_kind = trace::MemcpyKind::Unknown;
  std::uint64_t dst = 0;
  std::uint64_t src = 0;
};

inline IssueFacts issueFactsOf(const CallFacts& facts) noexcept {
  IssueFacts issue;
  issue.what = facts.what;
  issue.kernel_stub = facts.kernel_stub;
  issue.kernel_handle = facts.kernel_handle;
  issue.kernel_function = facts.kernel_function;
  issue.grid = facts.grid;
  issue.block = facts.block;
  issue.kernel_args = facts.kernel_args;
  issue.kernel_extra = facts.kernel_extra;
  issue.bytes = facts.bytes;
  issue.copy_kind = facts.copy_kind;
  issue.dst = facts.dst.address;
  issue.src = facts.src.address;
  return issue;
}

// What a call issues, besides its stream.
struct IssuedOp {
  trace::OpKind kind = trace::OpKind::Kernel;
  // Kernel: the launch shape (name, grid, block); Memcpy/Memset: byte count.
  trace::ShapeId shape = trace::kNoShape;
  std::uint64_t bytes = 0;
  trace::MemcpyKind memcpy_kind = trace::MemcpyKind::Unknown;
  // Up to two pointer arguments (Memcpy: 0 = dst, 1 = src; Memset: 0 = dst).
  std::uint8_t pointer_count = 0;
  std::uint64_t pointers[2] = {0, 0};
  // Kernels: the kernel and the launch's arguments (an array of one pointer per parameter, or
  // the driver's packed buffer in `extra`).
  const KernelInfo* kernel = nullptr;
  void** kernel_args = nullptr;
  void** kernel_extra = nullptr;
};

// The pending op record of an issued op (start_ns = 0, end_ns = its timing ticket).
inline trace::OpRecord pendingOp(const IssuedOp& op, trace::StreamId stream, std::uint32_t correlation,
                                 Ticket ticket) noexcept {
  const auto pending = static_cast<std::int64_t>(ticket);  // the background thread fills in the GPU times
  switch (op.kind) {
    case trace::OpKind::Memcpy:
      return trace::OpRecord::memcpy(op.memcpy_kind, stream, correlation, op.bytes, 0, pending);
    case trace::OpKind::Memset:
      return trace::OpRecord::memset(stream, correlation, op.bytes, 0, pending);
    default:
      return trace::OpRecord::launch(op.kind, stream, correlation, op.shape, 0, pending);
  }
}

// The op's pointer-argument records, in two steps so that they are written straight into the
// ring: how many (a kernel's touches, launch_touches.hpp, are found into `touches`, room for
// kMaxLaunchTouches, and their number into `touched`), then written from `first` of the ring's
// reservation. A copy's or fill's pointers are one record, a kernel's touches two to a record.
inline int argumentRecordCount(const IssuedOp& op, LaunchTouch* touches, int& touched) noexcept {
  const int pointers = op.pointer_count > 0 ? 1 : 0;
  touched = 0;
  if (op.kind != trace::OpKind::Kernel) return pointers;
  touched = launchTouches(op.kernel, op.kernel_args, op.kernel_extra, touches);
  return pointers + (touched < 0 ? 1 : (touched + 1) / 2);
}
void writeArgumentRecords(const IssuedOp& op, std::uint32_t correlation, const LaunchTouch* touches, int touched,
                          Ring& ring, std::uint64_t first) noexcept;

// The op a launch, copy or fill issues.
IssuedOp issuedOp(Recorder& recorder, ThreadState& thread, const IssueFacts& facts) noexcept;

// The kernel a launch names and its launch shape: looked up in the registry and interned on
// first sight, then found in the thread's cache of launches.
struct LaunchedShape {
  const KernelInfo* kernel = nullptr;
  trace::ShapeId shape = trace::kNoShape;
};
LaunchedShape launchedShape(Recorder& recorder, ThreadState& thread, const IssueFacts& launch) noexcept;

// Runs `call` (the real function, through the next layer) and records it, for a `recorder`
// that is recording, as an API call that issues the op `describe(recorder, thread)` returns, on
// `stream` (already the stream the runtime means: cudaStreamPerThread for a
// per-thread-default-stream call on stream 0). An op that does no GPU work (a copy or fill of 0
// bytes, which CUDA completes at once) is not timed: it takes its place in stream order
// (stream_order.hpp).
template <class Describe, class Call>
auto recordIssue(Recorder& recorder, trace::ApiDomain domain, ApiName api, cudaStream_t stream, bool gpu_work,
                 Describe&& describe, Call&& call) noexcept -> decltype(call()) {
  ThreadState* thread = recorder.thread();
  // Work an NCCL call issues on its own is that call's, not an op of its own.
  if (thread == nullptr || thread->nccl_depth > 0) return call();

  const std::int64_t start = monotonicNs();
  const std::uint32_t correlation = recorder.nextCorrelation(*thread);
  const int device = recorder.currentDevice(*thread);
  const bool captured = recorder.capturing(stream);
  TimingBackend& timing = recorder.timing();
  const Ticket ticket = captured ? kNoTicket : gpu_work ? timing.begin(device, stream, correlation) : kStreamOrderTicket;
  auto result = call();
  const bool issued = succeeded(result);
  const bool timed = ticket == kStreamOrderTicket || (ticket != kNoTicket && timing.end(ticket, stream, issued));
  const std::int64_t end = monotonicNs();

  // Everything is described first, then built in place in the ring (no copy of a record).
  const bool with_op = issued && !captured && timed;
  IssuedOp op;
  trace::StreamId stream_id = trace::kNoStream;
  LaunchTouch* touches = thread->touches;
  int touched = 0;
  std::uint64_t count = 1;
  if (with_op) {
    op = describe(recorder, *thread);
    stream_id = recorder.streamId(*thread, device, stream);
    count += 1 + static_cast<std::uint64_t>(argumentRecordCount(op, touches, touched));
  } else if (issued) {
    auto& counter = captured ? recorder.counters().ops_captured_into_graphs : recorder.counters().ops_untimed_no_timing_slot;
    counter.fetch_add(1, std::memory_order_relaxed);
  }
  Ring& ring = *thread->ring;
  if (!ring.tryReserve(count)) [[unlikely]] return result;
  trace::ApiCallRecord call_record;
  call_record.domain = domain;
  call_record.name_id = recorder.apiName(api);
  call_record.correlation_id = issued && !captured ? correlation : 0;
  call_record.result = static_cast<std::int32_t>(result);
  call_record.start_ns = start;
  call_record.end_ns = end;
  ring.reserved(0) = call_record;
  if (with_op) {
    ring.reserved(1) = pendingOp(op, stream_id, correlation, ticket);
    writeArgumentRecords(op, correlation, touches, touched, ring, 2);
  }
  ring.publish(count);
  return result;
}

// Runs a call that puts a marker on `stream` (cudaEventRecord: EventRecord, cudaStreamWaitEvent:
// StreamWait) and records it; the marker's GPU time comes from stream order.
template <class Call>
auto recordMarker(trace::ApiDomain domain, ApiName api, trace::OpKind kind, cudaStream_t stream, std::uint64_t event,
                  Call&& call) noexcept -> decltype(call()) {
  Recorder* recorder = Recorder::activate();
  if (recorder == nullptr || !recorder->recording()) [[unlikely]] return call();
  ThreadState* thread = recorder->thread();
  if (thread == nullptr || thread->nccl_depth > 0) return call();
  const std::int64_t start = monotonicNs();
  const bool captured = recorder->capturing(stream);
  auto result = call();
  const std::int64_t end = monotonicNs();
  const bool issued = succeeded(result) && !captured;
  const std::uint32_t correlation = recorder->nextCorrelation(*thread);
  trace::ApiCallRecord call_record;
  call_record.domain = domain;
  call_record.name_id = recorder->apiName(api);
  call_record.correlation_id = issued ? correlation : 0;
  call_record.result = static_cast<std::int32_t>(result);
  call_record.start_ns = start;
  call_record.end_ns = end;
  trace::Record records[2] = {call_record, {}};
  std::size_t count = 1;
  if (issued) {
    const int device = recorder->currentDevice(*thread);
    trace::OpRecord marker = trace::OpRecord::event(kind, recorder->streamId(*thread, device, stream), correlation,
                                                    recorder->catalog().eventId(event), 0, 0);
    marker.end_ns = static_cast<std::int64_t>(kStreamOrderTicket);
    records[count++] = marker;
  } else if (captured && succeeded(result)) {
    recorder->counters().ops_captured_into_graphs.fetch_add(1, std::memory_order_relaxed);
  }
  recorder->push(*thread, std::span<const trace::Record>(records, count));
  return result;
}

// Records a call that issues no GPU work (ApiCallRecord only, correlation 0).
void recordHostCall(Recorder& recorder, ThreadState& thread, trace::ApiDomain domain, ApiName api, std::int32_t result,
                    std::int64_t start, std::int64_t end) noexcept;

// Runs a host-blocking call and records it with its HostSync op (built by `sync`, given the
// correlation id and the call's host window).
template <class Call, class MakeSync>
auto recordSync(trace::ApiDomain domain, ApiName api, Call&& call, MakeSync&& sync) noexcept -> decltype(call()) {
  Recorder* recorder = Recorder::activate();
  if (recorder == nullptr || !recorder->recording()) [[unlikely]] return call();
  ThreadState* thread = recorder->thread();
  if (thread == nullptr || thread->nccl_depth > 0) return call();
  const std::int64_t start = monotonicNs();
  auto result = call();
  const std::int64_t end = monotonicNs();
  const std::uint32_t correlation = recorder->nextCorrelation(*thread);
  trace::ApiCallRecord call_record;
  call_record.domain = domain;
  call_record.name_id = recorder->apiName(api);
  call_record.correlation_id = correlation;
  call_record.result = static_cast<std::int32_t>(result);
  call_record.start_ns = start;
  call_record.end_ns = end;
  trace::Record records[2] = {call_record, sync(*recorder, *thread, correlation, start, end)};
  recorder->push(*thread, records);
  return result;
}

}  // namespace syncopate::preload
