// The runtime's layer: each interposed function that can order or touch GPU work becomes a
// tuner::Call for the scheduler, with the original call kept as a thunk the scheduler can
// issue (or hold). Functions that neither order nor touch GPU work (creating streams and
// events, allocating, querying devices) are left to the layer below.
#include "runtime_layer.hpp"

#include <cstdlib>
#include <cstring>

#include "dispatch/kernel_registry.hpp"
#include "plan_runtime.hpp"

namespace syncopate::preload {

namespace {

using tuner::Call;
using tuner::CallKind;
using tuner::StreamHandle;
using tuner::Touch;

constexpr int kMaxTouches = 64;

const CudartTable* cudartNext() { return runtimeNext().cudart; }
const DriverTable* driverNext() { return runtimeNext().driver; }
const NcclTable* ncclNext() { return runtimeNext().nccl; }

std::uint64_t address(const void* p) { return reinterpret_cast<std::uint64_t>(p); }

// The stream a call means. Stream 0 is the legacy default stream, or, through a per-thread
// entry point (_ptsz/_ptds), the thread's default stream.
StreamHandle streamOf(cudaStream_t s, bool per_thread = false) {
  if (s == nullptr) return per_thread ? reinterpret_cast<StreamHandle>(cudaStreamPerThread) : tuner::kLegacyStream;
  if (s == cudaStreamLegacy) return tuner::kLegacyStream;
  return reinterpret_cast<StreamHandle>(s);
}

Call makeCall(CallKind kind, StreamHandle stream) {
  Call c;
  c.kind = kind;
  c.stream = stream;
  return c;
}

// Hands `call` to the runtime when there is one for this thread, else makes it directly.
template <class F>
auto route(const Call& call, F&& original) -> decltype(original(StreamHandle{})) {
  using R = decltype(original(StreamHandle{}));
  PlanRuntime* rt = PlanRuntime::forCall();
  if (rt == nullptr) return original(call.stream);
  auto thunk = [&](StreamHandle target) -> int { return static_cast<int>(original(target)); };
  const PlanRuntime::Original ref(thunk);
  return static_cast<R>(rt->run(call, ref));
}

// ---- kernels ------------------------------------------------------------------------------------

// The pointer parameters of a launch (kernel parameter layouts: collector's registry).
void describeKernel(Call& c, const KernelInfo* kernel, void** args, Touch (&touches)[kMaxTouches]) {
  if (kernel == nullptr || args == nullptr || !kernel->layoutKnown()) {
    c.unknown_pointers = true;
    return;
  }
  std::uint64_t mask = kernel->pointerParameters();
  int n = 0;
  while (mask != 0 && n < kMaxTouches) {
    const int index = std::countr_zero(mask);
    mask &= mask - 1;
    std::uint64_t value = 0;
    std::memcpy(&value, args[index], sizeof value);
    if (value != 0) touches[n++] = {value, 0};
  }
  if (mask != 0) c.unknown_pointers = true;  // more pointers than we follow: cannot prove anything
  c.touches = std::span<const Touch>(touches, static_cast<std::size_t>(n));
}

template <class F>
cudaError_t launch(const KernelInfo* kernel, void** args, cudaStream_t stream, bool per_thread, F&& original) {
  Touch touches[kMaxTouches];
  Call c = makeCall(CallKind::Kernel, streamOf(stream, per_thread));
  describeKernel(c, kernel, args, touches);
  return route(c, [&](StreamHandle) { return original(); });
}

cudaError_t rt__cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void** args, size_t sh, cudaStream_t s) noexcept {
  if (PlanRuntime::forCall() == nullptr) return cudartNext()->__cudaLaunchKernel(k, g, b, args, sh, s);
  return launch(kernelRegistry().findLaunched(k), args, s, false,
                [&] { return cudartNext()->__cudaLaunchKernel(k, g, b, args, sh, s); });
}
cudaError_t rt__cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b, void** args, size_t sh, cudaStream_t s) noexcept {
  if (PlanRuntime::forCall() == nullptr) return cudartNext()->__cudaLaunchKernel_ptsz(k, g, b, args, sh, s);
  return launch(kernelRegistry().findLaunched(k), args, s, true,
                [&] { return cudartNext()->__cudaLaunchKernel_ptsz(k, g, b, args, sh, s); });
}
cudaError_t rtCudaLaunchKernel(const void* f, dim3 g, dim3 b, void** args, size_t sh, cudaStream_t s) noexcept {
  if (PlanRuntime::forCall() == nullptr) return cudartNext()->cudaLaunchKernel(f, g, b, args, sh, s);
  return launch(kernelRegistry().findOrNameRuntimeFunction(f), args, s, false,
                [&] { return cudartNext()->cudaLaunchKernel(f, g, b, args, sh, s); });
}
cudaError_t rtCudaLaunchKernel_ptsz(const void* f, dim3 g, dim3 b, void** args, size_t sh, cudaStream_t s) noexcept {
  if (PlanRuntime::forCall() == nullptr) return cudartNext()->cudaLaunchKernel_ptsz(f, g, b, args, sh, s);
  return launch(kernelRegistry().findOrNameRuntimeFunction(f), args, s, true,
                [&] { return cudartNext()->cudaLaunchKernel_ptsz(f, g, b, args, sh, s); });
}
cudaError_t rtCudaLaunchCooperativeKernel(const void* f, dim3 g, dim3 b, void** args, size_t sh, cudaStream_t s) noexcept {
  if (PlanRuntime::forCall() == nullptr) return cudartNext()->cudaLaunchCooperativeKernel(f, g, b, args, sh, s);
  return launch(kernelRegistry().findOrNameRuntimeFunction(f), args, s, false,
                [&] { return cudartNext()->cudaLaunchCooperativeKernel(f, g, b, args, sh, s); });
}
cudaError_t rtCudaLaunchCooperativeKernel_ptsz(const void* f, dim3 g, dim3 b, void** args, size_t sh,
                                               cudaStream_t s) noexcept {
  if (PlanRuntime::forCall() == nullptr) return cudartNext()->cudaLaunchCooperativeKernel_ptsz(f, g, b, args, sh, s);
  return launch(kernelRegistry().findOrNameRuntimeFunction(f), args, s, true,
                [&] { return cudartNext()->cudaLaunchCooperativeKernel_ptsz(f, g, b, args, sh, s); });
}
cudaError_t rtCudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* f, void** args) noexcept {
  if (config == nullptr || PlanRuntime::forCall() == nullptr) return cudartNext()->cudaLaunchKernelExC(config, f, args);
  return launch(kernelRegistry().findOrNameRuntimeFunction(f), args, config->stream, false,
                [&] { return cudartNext()->cudaLaunchKernelExC(config, f, args); });
}
cudaError_t rtCudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* f, void** args) noexcept {
  if (config == nullptr || PlanRuntime::forCall() == nullptr) return cudartNext()->cudaLaunchKernelExC_ptsz(config, f, args);
  return launch(kernelRegistry().findOrNameRuntimeFunction(f), args, config->stream, true,
                [&] { return cudartNext()->cudaLaunchKernelExC_ptsz(config, f, args); });
}

// ---- copies and fills -------------------------------------------------------------------------

// An op that touches up to two ranges; `sync`: it also blocks the host (cudaMemcpy).
template <class F>
cudaError_t ranged(CallKind kind, StreamHandle stream, Touch a, Touch b, bool sync, F&& original) {
  Touch touches[2] = {a, b};
  Call c = makeCall(kind, stream);
  c.touches = std::span<const Touch>(touches, b.bytes > 0 && b.address != 0 ? 2 : 1);
  c.synchronous = sync;
  return route(c, [&](StreamHandle) { return original(); });
}

cudaError_t rtCudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind k) noexcept {
  return ranged(CallKind::Memcpy, tuner::kLegacyStream, {address(d), n}, {address(s), n}, true,
                [&] { return cudartNext()->cudaMemcpy(d, s, n, k); });
}
cudaError_t rtCudaMemcpy_ptds(void* d, const void* s, size_t n, cudaMemcpyKind k) noexcept {
  return ranged(CallKind::Memcpy, streamOf(nullptr, true), {address(d), n}, {address(s), n}, true,
                [&] { return cudartNext()->cudaMemcpy_ptds(d, s, n, k); });
}
cudaError_t rtCudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t st) noexcept {
  return ranged(CallKind::Memcpy, streamOf(st), {address(d), n}, {address(s), n}, false,
                [&] { return cudartNext()->cudaMemcpyAsync(d, s, n, k, st); });
}
cudaError_t rtCudaMemcpyAsync_ptsz(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t st) noexcept {
  return ranged(CallKind::Memcpy, streamOf(st, true), {address(d), n}, {address(s), n}, false,
                [&] { return cudartNext()->cudaMemcpyAsync_ptsz(d, s, n, k, st); });
}
cudaError_t rtCudaMemcpy2D(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, cudaMemcpyKind k) noexcept {
  return ranged(CallKind::Memcpy, tuner::kLegacyStream, {address(d), dp * h}, {address(s), sp * h}, true,
                [&] { return cudartNext()->cudaMemcpy2D(d, dp, s, sp, w, h, k); });
}
cudaError_t rtCudaMemcpy2D_ptds(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, cudaMemcpyKind k) noexcept {
  return ranged(CallKind::Memcpy, streamOf(nullptr, true), {address(d), dp * h}, {address(s), sp * h}, true,
                [&] { return cudartNext()->cudaMemcpy2D_ptds(d, dp, s, sp, w, h, k); });
}
cudaError_t rtCudaMemcpy2DAsync(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, cudaMemcpyKind k,
                                cudaStream_t st) noexcept {
  return ranged(CallKind::Memcpy, streamOf(st), {address(d), dp * h}, {address(s), sp * h}, false,
                [&] { return cudartNext()->cudaMemcpy2DAsync(d, dp, s, sp, w, h, k, st); });
}
cudaError_t rtCudaMemcpy2DAsync_ptsz(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h,
                                     cudaMemcpyKind k, cudaStream_t st) noexcept {
  return ranged(CallKind::Memcpy, streamOf(st, true), {address(d), dp * h}, {address(s), sp * h}, false,
                [&] { return cudartNext()->cudaMemcpy2DAsync_ptsz(d, dp, s, sp, w, h, k, st); });
}
cudaError_t rtCudaMemset(void* p, int v, size_t n) noexcept {
  return ranged(CallKind::Memset, tuner::kLegacyStream, {address(p), n}, {}, true,
                [&] { return cudartNext()->cudaMemset(p, v, n); });
}
cudaError_t rtCudaMemset_ptds(void* p, int v, size_t n) noexcept {
  return ranged(CallKind::Memset, streamOf(nullptr, true), {address(p), n}, {}, true,
                [&] { return cudartNext()->cudaMemset_ptds(p, v, n); });
}
cudaError_t rtCudaMemsetAsync(void* p, int v, size_t n, cudaStream_t st) noexcept {
  return ranged(CallKind::Memset, streamOf(st), {address(p), n}, {}, false,
                [&] { return cudartNext()->cudaMemsetAsync(p, v, n, st); });
}
cudaError_t rtCudaMemsetAsync_ptsz(void* p, int v, size_t n, cudaStream_t st) noexcept {
  return ranged(CallKind::Memset, streamOf(st, true), {address(p), n}, {}, false,
                [&] { return cudartNext()->cudaMemsetAsync_ptsz(p, v, n, st); });
}
cudaError_t rtCudaMemset2DAsync(void* p, size_t pitch, int v, size_t w, size_t h, cudaStream_t st) noexcept {
  return ranged(CallKind::Memset, streamOf(st), {address(p), pitch * h}, {}, false,
                [&] { return cudartNext()->cudaMemset2DAsync(p, pitch, v, w, h, st); });
}

// Calls whose effect on memory is not followed: a barrier on their stream (or the device).
template <class F>
cudaError_t barrier(StreamHandle stream, F&& original) {
  return route(makeCall(CallKind::Barrier, stream), [&](StreamHandle) { return original(); });
}

cudaError_t rtCudaMemcpyPeer(void* d, int dd, const void* s, int sd, size_t n) noexcept {
  return barrier(tuner::kLegacyStream, [&] { return cudartNext()->cudaMemcpyPeer(d, dd, s, sd, n); });
}
cudaError_t rtCudaMemcpyPeerAsync(void* d, int dd, const void* s, int sd, size_t n, cudaStream_t st) noexcept {
  return barrier(streamOf(st), [&] { return cudartNext()->cudaMemcpyPeerAsync(d, dd, s, sd, n, st); });
}
cudaError_t rtCudaFreeAsync(void* p, cudaStream_t st) noexcept {
  return barrier(streamOf(st), [&] { return cudartNext()->cudaFreeAsync(p, st); });
}
cudaError_t rtCudaFreeAsync_ptsz(void* p, cudaStream_t st) noexcept {
  return barrier(streamOf(st, true), [&] { return cudartNext()->cudaFreeAsync_ptsz(p, st); });
}
cudaError_t rtCudaMemset2D(void* p, size_t pitch, int v, size_t w, size_t h) noexcept {
  return ranged(CallKind::Memset, tuner::kLegacyStream, {address(p), pitch * h}, {}, true,
                [&] { return cudartNext()->cudaMemset2D(p, pitch, v, w, h); });
}
cudaError_t rtCudaMemset2D_ptds(void* p, size_t pitch, int v, size_t w, size_t h) noexcept {
  return ranged(CallKind::Memset, streamOf(nullptr, true), {address(p), pitch * h}, {}, true,
                [&] { return cudartNext()->cudaMemset2D_ptds(p, pitch, v, w, h); });
}
cudaError_t rtCudaMemset2DAsync_ptsz(void* p, size_t pitch, int v, size_t w, size_t h, cudaStream_t st) noexcept {
  return ranged(CallKind::Memset, streamOf(st, true), {address(p), pitch * h}, {}, false,
                [&] { return cudartNext()->cudaMemset2DAsync_ptsz(p, pitch, v, w, h, st); });
}
// Copies to and from device variables (symbols): the symbol side is not an address the
// runtime follows, so the copy is a barrier.
cudaError_t rtCudaMemcpyToSymbol(const void* sym, const void* s, size_t n, size_t off, cudaMemcpyKind k) noexcept {
  return barrier(tuner::kLegacyStream, [&] { return cudartNext()->cudaMemcpyToSymbol(sym, s, n, off, k); });
}
cudaError_t rtCudaMemcpyToSymbol_ptds(const void* sym, const void* s, size_t n, size_t off, cudaMemcpyKind k) noexcept {
  return barrier(streamOf(nullptr, true), [&] { return cudartNext()->cudaMemcpyToSymbol_ptds(sym, s, n, off, k); });
}
cudaError_t rtCudaMemcpyFromSymbol(void* d, const void* sym, size_t n, size_t off, cudaMemcpyKind k) noexcept {
  return barrier(tuner::kLegacyStream, [&] { return cudartNext()->cudaMemcpyFromSymbol(d, sym, n, off, k); });
}
cudaError_t rtCudaMemcpyFromSymbol_ptds(void* d, const void* sym, size_t n, size_t off, cudaMemcpyKind k) noexcept {
  return barrier(streamOf(nullptr, true), [&] { return cudartNext()->cudaMemcpyFromSymbol_ptds(d, sym, n, off, k); });
}
cudaError_t rtCudaMemcpyToSymbolAsync(const void* sym, const void* s, size_t n, size_t off, cudaMemcpyKind k,
                                      cudaStream_t st) noexcept {
  return barrier(streamOf(st), [&] { return cudartNext()->cudaMemcpyToSymbolAsync(sym, s, n, off, k, st); });
}
cudaError_t rtCudaMemcpyToSymbolAsync_ptsz(const void* sym, const void* s, size_t n, size_t off, cudaMemcpyKind k,
                                           cudaStream_t st) noexcept {
  return barrier(streamOf(st, true), [&] { return cudartNext()->cudaMemcpyToSymbolAsync_ptsz(sym, s, n, off, k, st); });
}
cudaError_t rtCudaMemcpyFromSymbolAsync(void* d, const void* sym, size_t n, size_t off, cudaMemcpyKind k,
                                        cudaStream_t st) noexcept {
  return barrier(streamOf(st), [&] { return cudartNext()->cudaMemcpyFromSymbolAsync(d, sym, n, off, k, st); });
}
cudaError_t rtCudaMemcpyFromSymbolAsync_ptsz(void* d, const void* sym, size_t n, size_t off, cudaMemcpyKind k,
                                             cudaStream_t st) noexcept {
  return barrier(streamOf(st, true), [&] { return cudartNext()->cudaMemcpyFromSymbolAsync_ptsz(d, sym, n, off, k, st); });
}
cudaError_t rtCudaGraphLaunch(cudaGraphExec_t g, cudaStream_t st) noexcept {
  return barrier(streamOf(st), [&] { return cudartNext()->cudaGraphLaunch(g, st); });
}
cudaError_t rtCudaGraphLaunch_ptsz(cudaGraphExec_t g, cudaStream_t st) noexcept {
  return barrier(streamOf(st, true), [&] { return cudartNext()->cudaGraphLaunch_ptsz(g, st); });
}

// ---- streams, events, synchronisation ------------------------------------------------------------

template <class F>
cudaError_t simple(CallKind kind, StreamHandle stream, std::uint64_t event, F&& original) {
  Call c = makeCall(kind, stream);
  c.event = event;
  return route(c, [&](StreamHandle) { return original(); });
}

cudaError_t rtCudaStreamSynchronize(cudaStream_t s) noexcept {
  return simple(CallKind::StreamSync, streamOf(s), 0, [&] { return cudartNext()->cudaStreamSynchronize(s); });
}
cudaError_t rtCudaStreamSynchronize_ptsz(cudaStream_t s) noexcept {
  return simple(CallKind::StreamSync, streamOf(s, true), 0, [&] { return cudartNext()->cudaStreamSynchronize_ptsz(s); });
}
cudaError_t rtCudaStreamQuery(cudaStream_t s) noexcept {
  return simple(CallKind::StreamQuery, streamOf(s), 0, [&] { return cudartNext()->cudaStreamQuery(s); });
}
cudaError_t rtCudaStreamQuery_ptsz(cudaStream_t s) noexcept {
  return simple(CallKind::StreamQuery, streamOf(s, true), 0, [&] { return cudartNext()->cudaStreamQuery_ptsz(s); });
}
cudaError_t rtCudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int f) noexcept {
  return simple(CallKind::StreamWait, streamOf(s), address(e), [&] { return cudartNext()->cudaStreamWaitEvent(s, e, f); });
}
cudaError_t rtCudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned int f) noexcept {
  return simple(CallKind::StreamWait, streamOf(s, true), address(e),
                [&] { return cudartNext()->cudaStreamWaitEvent_ptsz(s, e, f); });
}
cudaError_t rtCudaEventSynchronize(cudaEvent_t e) noexcept {
  return simple(CallKind::EventSync, tuner::kLegacyStream, address(e), [&] { return cudartNext()->cudaEventSynchronize(e); });
}
cudaError_t rtCudaDeviceSynchronize() noexcept {
  return simple(CallKind::DeviceSync, tuner::kLegacyStream, 0, [&] { return cudartNext()->cudaDeviceSynchronize(); });
}
// Freeing device or pinned memory waits for the whole device first, as CUDA does.
cudaError_t rtCudaFree(void* p) noexcept {
  return simple(CallKind::DeviceSync, tuner::kLegacyStream, 0, [&] { return cudartNext()->cudaFree(p); });
}
cudaError_t rtCudaFreeHost(void* p) noexcept {
  return simple(CallKind::DeviceSync, tuner::kLegacyStream, 0, [&] { return cudartNext()->cudaFreeHost(p); });
}

// An application event may be recorded on the join stream instead (the thunk's stream).
template <class F>
cudaError_t eventRecord(cudaEvent_t e, cudaStream_t s, bool per_thread, F&& original) {
  Call c = makeCall(CallKind::EventRecord, streamOf(s, per_thread));
  c.event = address(e);
  return route(c, [&](StreamHandle target) {
    return original(target == c.stream ? s : reinterpret_cast<cudaStream_t>(target));
  });
}
cudaError_t rtCudaEventRecord(cudaEvent_t e, cudaStream_t s) noexcept {
  return eventRecord(e, s, false, [&](cudaStream_t on) { return cudartNext()->cudaEventRecord(e, on); });
}
cudaError_t rtCudaEventRecord_ptsz(cudaEvent_t e, cudaStream_t s) noexcept {
  return eventRecord(e, s, true, [&](cudaStream_t on) { return cudartNext()->cudaEventRecord_ptsz(e, on); });
}
cudaError_t rtCudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned int f) noexcept {
  return eventRecord(e, s, false, [&](cudaStream_t on) { return cudartNext()->cudaEventRecordWithFlags(e, on, f); });
}
cudaError_t rtCudaEventRecordWithFlags_ptsz(cudaEvent_t e, cudaStream_t s, unsigned int f) noexcept {
  return eventRecord(e, s, true, [&](cudaStream_t on) { return cudartNext()->cudaEventRecordWithFlags_ptsz(e, on, f); });
}

// Another device stops the plan before the switch (a switch that then fails too: stopping is
// always safe), so that what it holds is issued with the device it belongs to current.
cudaError_t rtCudaSetDevice(int device) noexcept {
  if (PlanRuntime* rt = PlanRuntime::forCall()) rt->selectingDevice(device);
  return cudartNext()->cudaSetDevice(device);
}

cudaError_t rtCudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode m) noexcept {
  return simple(CallKind::CaptureBegin, streamOf(s), 0, [&] { return cudartNext()->cudaStreamBeginCapture(s, m); });
}
cudaError_t rtCudaStreamBeginCapture_ptsz(cudaStream_t s, cudaStreamCaptureMode m) noexcept {
  return simple(CallKind::CaptureBegin, streamOf(s, true), 0, [&] { return cudartNext()->cudaStreamBeginCapture_ptsz(s, m); });
}
cudaError_t rtCudaStreamEndCapture(cudaStream_t s, cudaGraph_t* g) noexcept {
  return simple(CallKind::CaptureEnd, streamOf(s), 0, [&] { return cudartNext()->cudaStreamEndCapture(s, g); });
}
cudaError_t rtCudaStreamEndCapture_ptsz(cudaStream_t s, cudaGraph_t* g) noexcept {
  return simple(CallKind::CaptureEnd, streamOf(s, true), 0, [&] { return cudartNext()->cudaStreamEndCapture_ptsz(s, g); });
}

void wrapCudart(CudartTable& table, const CudartTable& next) noexcept {
  runtimeNext().cudart = &next;
  table.__cudaLaunchKernel = rt__cudaLaunchKernel;
  table.__cudaLaunchKernel_ptsz = rt__cudaLaunchKernel_ptsz;
  table.cudaLaunchKernel = rtCudaLaunchKernel;
  table.cudaLaunchKernel_ptsz = rtCudaLaunchKernel_ptsz;
  table.cudaLaunchCooperativeKernel = rtCudaLaunchCooperativeKernel;
  table.cudaLaunchCooperativeKernel_ptsz = rtCudaLaunchCooperativeKernel_ptsz;
  table.cudaLaunchKernelExC = rtCudaLaunchKernelExC;
  table.cudaLaunchKernelExC_ptsz = rtCudaLaunchKernelExC_ptsz;
  table.cudaMemcpy = rtCudaMemcpy;
  table.cudaMemcpy_ptds = rtCudaMemcpy_ptds;
  table.cudaMemcpyAsync = rtCudaMemcpyAsync;
  table.cudaMemcpyAsync_ptsz = rtCudaMemcpyAsync_ptsz;
  table.cudaMemcpy2D = rtCudaMemcpy2D;
  table.cudaMemcpy2D_ptds = rtCudaMemcpy2D_ptds;
  table.cudaMemcpy2DAsync = rtCudaMemcpy2DAsync;
  table.cudaMemcpy2DAsync_ptsz = rtCudaMemcpy2DAsync_ptsz;
  table.cudaMemcpyPeer = rtCudaMemcpyPeer;
  table.cudaMemcpyPeerAsync = rtCudaMemcpyPeerAsync;
  table.cudaMemset = rtCudaMemset;
  table.cudaMemset_ptds = rtCudaMemset_ptds;
  table.cudaMemsetAsync = rtCudaMemsetAsync;
  table.cudaMemsetAsync_ptsz = rtCudaMemsetAsync_ptsz;
  table.cudaMemset2DAsync = rtCudaMemset2DAsync;
  table.cudaFreeAsync = rtCudaFreeAsync;
  table.cudaFreeAsync_ptsz = rtCudaFreeAsync_ptsz;
  table.cudaMemset2D = rtCudaMemset2D;
  table.cudaMemset2D_ptds = rtCudaMemset2D_ptds;
  table.cudaMemset2DAsync_ptsz = rtCudaMemset2DAsync_ptsz;
  table.cudaMemcpyToSymbol = rtCudaMemcpyToSymbol;
  table.cudaMemcpyToSymbol_ptds = rtCudaMemcpyToSymbol_ptds;
  table.cudaMemcpyFromSymbol = rtCudaMemcpyFromSymbol;
  table.cudaMemcpyFromSymbol_ptds = rtCudaMemcpyFromSymbol_ptds;
  table.cudaMemcpyToSymbolAsync = rtCudaMemcpyToSymbolAsync;
  table.cudaMemcpyToSymbolAsync_ptsz = rtCudaMemcpyToSymbolAsync_ptsz;
  table.cudaMemcpyFromSymbolAsync = rtCudaMemcpyFromSymbolAsync;
  table.cudaMemcpyFromSymbolAsync_ptsz = rtCudaMemcpyFromSymbolAsync_ptsz;
  table.cudaGraphLaunch = rtCudaGraphLaunch;
  table.cudaGraphLaunch_ptsz = rtCudaGraphLaunch_ptsz;
  table.cudaStreamSynchronize = rtCudaStreamSynchronize;
  table.cudaStreamSynchronize_ptsz = rtCudaStreamSynchronize_ptsz;
  table.cudaStreamQuery = rtCudaStreamQuery;
  table.cudaStreamQuery_ptsz = rtCudaStreamQuery_ptsz;
  table.cudaStreamWaitEvent = rtCudaStreamWaitEvent;
  table.cudaStreamWaitEvent_ptsz = rtCudaStreamWaitEvent_ptsz;
  table.cudaEventSynchronize = rtCudaEventSynchronize;
  table.cudaDeviceSynchronize = rtCudaDeviceSynchronize;
  table.cudaFree = rtCudaFree;
  table.cudaFreeHost = rtCudaFreeHost;
  table.cudaEventRecord = rtCudaEventRecord;
  table.cudaEventRecord_ptsz = rtCudaEventRecord_ptsz;
  table.cudaEventRecordWithFlags = rtCudaEventRecordWithFlags;
  table.cudaEventRecordWithFlags_ptsz = rtCudaEventRecordWithFlags_ptsz;
  table.cudaSetDevice = rtCudaSetDevice;
  table.cudaStreamBeginCapture = rtCudaStreamBeginCapture;
  table.cudaStreamBeginCapture_ptsz = rtCudaStreamBeginCapture_ptsz;
  table.cudaStreamEndCapture = rtCudaStreamEndCapture;
  table.cudaStreamEndCapture_ptsz = rtCudaStreamEndCapture_ptsz;
  // Left to the layer below: creating and destroying streams and events, allocating, kernel
  // handles and driver entry points. None of them orders or touches GPU work.
}

// ---- driver ---------------------------------------------------------------------------------------

StreamHandle driverStream(CUstream s, bool per_thread = false) { return streamOf(reinterpret_cast<cudaStream_t>(s), per_thread); }

template <class F>
CUresult driverRouted(const Call& call, F&& original) {
  return route(call, [&](StreamHandle) { return original(); });
}

// Driver launches come with a CUfunction whose parameter layout no query answers here: each
// is a barrier on its stream.
CUresult rtCuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned sh, CUstream s, void** params, void** extra) noexcept {
  Call c = makeCall(CallKind::Kernel, driverStream(s));
  c.unknown_pointers = true;
  return driverRouted(c, [&] { return driverNext()->cuLaunchKernel(f, gx, gy, gz, bx, by, bz, sh, s, params, extra); });
}
CUresult rtCuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned sh, CUstream s, void** params, void** extra) noexcept {
  Call c = makeCall(CallKind::Kernel, driverStream(s, true));
  c.unknown_pointers = true;
  return driverRouted(c, [&] { return driverNext()->cuLaunchKernel_ptsz(f, gx, gy, gz, bx, by, bz, sh, s, params, extra); });
}
CUresult rtCuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) noexcept {
  Call c = makeCall(CallKind::Kernel, config != nullptr ? driverStream(config->hStream) : tuner::kLegacyStream);
  c.unknown_pointers = true;
  return driverRouted(c, [&] { return driverNext()->cuLaunchKernelEx(config, f, params, extra); });
}
CUresult rtCuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) noexcept {
  Call c = makeCall(CallKind::Kernel, config != nullptr ? driverStream(config->hStream, true) : tuner::kLegacyStream);
  c.unknown_pointers = true;
  return driverRouted(c, [&] { return driverNext()->cuLaunchKernelEx_ptsz(config, f, params, extra); });
}
CUresult rtCuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) noexcept {
  Touch t[2] = {{d, n}, {s, n}};
  Call c = makeCall(CallKind::Memcpy, driverStream(st));
  c.touches = t;
  return driverRouted(c, [&] { return driverNext()->cuMemcpyDtoDAsync_v2(d, s, n, st); });
}
CUresult rtCuMemcpyHtoDAsync(CUdeviceptr d, const void* s, size_t n, CUstream st) noexcept {
  Touch t[1] = {{d, n}};
  Call c = makeCall(CallKind::Memcpy, driverStream(st));
  c.touches = t;
  return driverRouted(c, [&] { return driverNext()->cuMemcpyHtoDAsync_v2(d, s, n, st); });
}
CUresult rtCuMemcpyDtoHAsync(void* d, CUdeviceptr s, size_t n, CUstream st) noexcept {
  Touch t[1] = {{s, n}};
  Call c = makeCall(CallKind::Memcpy, driverStream(st));
  c.touches = t;
  return driverRouted(c, [&] { return driverNext()->cuMemcpyDtoHAsync_v2(d, s, n, st); });
}
CUresult rtCuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) noexcept {
  Touch t[2] = {{d, n}, {s, n}};
  Call c = makeCall(CallKind::Memcpy, driverStream(st));
  c.touches = t;
  return driverRouted(c, [&] { return driverNext()->cuMemcpyAsync(d, s, n, st); });
}
CUresult rtCuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream st) noexcept {
  Touch t[1] = {{d, n}};
  Call c = makeCall(CallKind::Memset, driverStream(st));
  c.touches = t;
  return driverRouted(c, [&] { return driverNext()->cuMemsetD8Async(d, v, n, st); });
}
CUresult rtCuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream st) noexcept {
  Touch t[1] = {{d, 4 * n}};
  Call c = makeCall(CallKind::Memset, driverStream(st));
  c.touches = t;
  return driverRouted(c, [&] { return driverNext()->cuMemsetD32Async(d, v, n, st); });
}
CUresult rtCuStreamSynchronize(CUstream s) noexcept {
  return driverRouted(makeCall(CallKind::StreamSync, driverStream(s)), [&] { return driverNext()->cuStreamSynchronize(s); });
}
CUresult rtCuStreamWaitEvent(CUstream s, CUevent e, unsigned int f) noexcept {
  Call c = makeCall(CallKind::StreamWait, driverStream(s));
  c.event = address(e);
  return driverRouted(c, [&] { return driverNext()->cuStreamWaitEvent(s, e, f); });
}
CUresult rtCuEventRecord(CUevent e, CUstream s) noexcept {
  Call c = makeCall(CallKind::EventRecord, driverStream(s));
  c.event = address(e);
  return route(c, [&](StreamHandle target) {
    return driverNext()->cuEventRecord(e, target == c.stream ? s : reinterpret_cast<CUstream>(target));
  });
}
CUresult rtCuEventSynchronize(CUevent e) noexcept {
  Call c = makeCall(CallKind::EventSync, tuner::kLegacyStream);
  c.event = address(e);
  return driverRouted(c, [&] { return driverNext()->cuEventSynchronize(e); });
}
CUresult rtCuCtxSynchronize() noexcept {
  return driverRouted(makeCall(CallKind::DeviceSync, tuner::kLegacyStream), [&] { return driverNext()->cuCtxSynchronize(); });
}

// The remaining variants, by the same rules.
template <class F>
CUresult driverRanged(CallKind kind, StreamHandle stream, Touch a, Touch b, bool sync, F&& original) {
  Touch t[2] = {a, b};
  Call c = makeCall(kind, stream);
  c.touches = std::span<const Touch>(t, b.bytes > 0 ? 2 : 1);
  c.synchronous = sync;
  return driverRouted(c, original);
}
CUresult rtCuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                     unsigned bz, unsigned sh, CUstream s, void** params) noexcept {
  Call c = makeCall(CallKind::Kernel, driverStream(s));
  c.unknown_pointers = true;
  return driverRouted(c, [&] { return driverNext()->cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, sh, s, params); });
}
CUresult rtCuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                          unsigned by, unsigned bz, unsigned sh, CUstream s, void** params) noexcept {
  Call c = makeCall(CallKind::Kernel, driverStream(s, true));
  c.unknown_pointers = true;
  return driverRouted(c, [&] { return driverNext()->cuLaunchCooperativeKernel_ptsz(f, gx, gy, gz, bx, by, bz, sh, s, params); });
}
CUresult rtCuMemcpyHtoD(CUdeviceptr d, const void* s, size_t n) noexcept {
  return driverRanged(CallKind::Memcpy, tuner::kLegacyStream, {d, n}, {}, true, [&] { return driverNext()->cuMemcpyHtoD_v2(d, s, n); });
}
CUresult rtCuMemcpyHtoD_ptds(CUdeviceptr d, const void* s, size_t n) noexcept {
  return driverRanged(CallKind::Memcpy, streamOf(nullptr, true), {d, n}, {}, true,
                      [&] { return driverNext()->cuMemcpyHtoD_v2_ptds(d, s, n); });
}
CUresult rtCuMemcpyDtoH(void* d, CUdeviceptr s, size_t n) noexcept {
  return driverRanged(CallKind::Memcpy, tuner::kLegacyStream, {s, n}, {}, true, [&] { return driverNext()->cuMemcpyDtoH_v2(d, s, n); });
}
CUresult rtCuMemcpyDtoH_ptds(void* d, CUdeviceptr s, size_t n) noexcept {
  return driverRanged(CallKind::Memcpy, streamOf(nullptr, true), {s, n}, {}, true,
                      [&] { return driverNext()->cuMemcpyDtoH_v2_ptds(d, s, n); });
}
CUresult rtCuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) noexcept {
  return driverRanged(CallKind::Memcpy, tuner::kLegacyStream, {d, n}, {s, n}, true, [&] { return driverNext()->cuMemcpyDtoD_v2(d, s, n); });
}
CUresult rtCuMemcpyDtoD_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) noexcept {
  return driverRanged(CallKind::Memcpy, streamOf(nullptr, true), {d, n}, {s, n}, true,
                      [&] { return driverNext()->cuMemcpyDtoD_v2_ptds(d, s, n); });
}
CUresult rtCuMemcpyHtoDAsync_ptsz(CUdeviceptr d, const void* s, size_t n, CUstream st) noexcept {
  return driverRanged(CallKind::Memcpy, driverStream(st, true), {d, n}, {}, false,
                      [&] { return driverNext()->cuMemcpyHtoDAsync_v2_ptsz(d, s, n, st); });
}
CUresult rtCuMemcpyDtoHAsync_ptsz(void* d, CUdeviceptr s, size_t n, CUstream st) noexcept {
  return driverRanged(CallKind::Memcpy, driverStream(st, true), {s, n}, {}, false,
                      [&] { return driverNext()->cuMemcpyDtoHAsync_v2_ptsz(d, s, n, st); });
}
CUresult rtCuMemcpyDtoDAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) noexcept {
  return driverRanged(CallKind::Memcpy, driverStream(st, true), {d, n}, {s, n}, false,
                      [&] { return driverNext()->cuMemcpyDtoDAsync_v2_ptsz(d, s, n, st); });
}
CUresult rtCuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) noexcept {
  return driverRanged(CallKind::Memcpy, driverStream(st, true), {d, n}, {s, n}, false,
                      [&] { return driverNext()->cuMemcpyAsync_ptsz(d, s, n, st); });
}
CUresult rtCuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream st) noexcept {
  return driverRanged(CallKind::Memset, driverStream(st, true), {d, n}, {}, false,
                      [&] { return driverNext()->cuMemsetD8Async_ptsz(d, v, n, st); });
}
CUresult rtCuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream st) noexcept {
  return driverRanged(CallKind::Memset, driverStream(st), {d, 2 * n}, {}, false,
                      [&] { return driverNext()->cuMemsetD16Async(d, v, n, st); });
}
CUresult rtCuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream st) noexcept {
  return driverRanged(CallKind::Memset, driverStream(st, true), {d, 2 * n}, {}, false,
                      [&] { return driverNext()->cuMemsetD16Async_ptsz(d, v, n, st); });
}
CUresult rtCuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream st) noexcept {
  return driverRanged(CallKind::Memset, driverStream(st, true), {d, 4 * n}, {}, false,
                      [&] { return driverNext()->cuMemsetD32Async_ptsz(d, v, n, st); });
}
CUresult rtCuStreamSynchronize_ptsz(CUstream s) noexcept {
  return driverRouted(makeCall(CallKind::StreamSync, driverStream(s, true)),
                      [&] { return driverNext()->cuStreamSynchronize_ptsz(s); });
}
CUresult rtCuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int f) noexcept {
  Call c = makeCall(CallKind::StreamWait, driverStream(s, true));
  c.event = address(e);
  return driverRouted(c, [&] { return driverNext()->cuStreamWaitEvent_ptsz(s, e, f); });
}
template <class F>
CUresult driverEventRecord(CUevent e, CUstream s, bool per_thread, F&& original) {
  Call c = makeCall(CallKind::EventRecord, driverStream(s, per_thread));
  c.event = address(e);
  return route(c, [&](StreamHandle target) { return original(target == c.stream ? s : reinterpret_cast<CUstream>(target)); });
}
CUresult rtCuEventRecord_ptsz(CUevent e, CUstream s) noexcept {
  return driverEventRecord(e, s, true, [&](CUstream on) { return driverNext()->cuEventRecord_ptsz(e, on); });
}
CUresult rtCuEventRecordWithFlags(CUevent e, CUstream s, unsigned int f) noexcept {
  return driverEventRecord(e, s, false, [&](CUstream on) { return driverNext()->cuEventRecordWithFlags(e, on, f); });
}
CUresult rtCuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned int f) noexcept {
  return driverEventRecord(e, s, true, [&](CUstream on) { return driverNext()->cuEventRecordWithFlags_ptsz(e, on, f); });
}
CUresult rtCuMemFree(CUdeviceptr p) noexcept {
  return driverRouted(makeCall(CallKind::DeviceSync, tuner::kLegacyStream), [&] { return driverNext()->cuMemFree_v2(p); });
}

void wrapDriver(DriverTable& table, const DriverTable& next) noexcept {
  runtimeNext().driver = &next;
  table.cuLaunchKernel = rtCuLaunchKernel;
  table.cuLaunchKernel_ptsz = rtCuLaunchKernel_ptsz;
  table.cuLaunchKernelEx = rtCuLaunchKernelEx;
  table.cuLaunchKernelEx_ptsz = rtCuLaunchKernelEx_ptsz;
  table.cuMemcpyDtoDAsync_v2 = rtCuMemcpyDtoDAsync;
  table.cuMemcpyHtoDAsync_v2 = rtCuMemcpyHtoDAsync;
  table.cuMemcpyDtoHAsync_v2 = rtCuMemcpyDtoHAsync;
  table.cuMemcpyAsync = rtCuMemcpyAsync;
  table.cuMemsetD8Async = rtCuMemsetD8Async;
  table.cuMemsetD32Async = rtCuMemsetD32Async;
  table.cuStreamSynchronize = rtCuStreamSynchronize;
  table.cuStreamWaitEvent = rtCuStreamWaitEvent;
  table.cuEventRecord = rtCuEventRecord;
  table.cuEventSynchronize = rtCuEventSynchronize;
  table.cuCtxSynchronize = rtCuCtxSynchronize;
  table.cuLaunchCooperativeKernel = rtCuLaunchCooperativeKernel;
  table.cuLaunchCooperativeKernel_ptsz = rtCuLaunchCooperativeKernel_ptsz;
  table.cuMemcpyHtoD_v2 = rtCuMemcpyHtoD;
  table.cuMemcpyHtoD_v2_ptds = rtCuMemcpyHtoD_ptds;
  table.cuMemcpyDtoH_v2 = rtCuMemcpyDtoH;
  table.cuMemcpyDtoH_v2_ptds = rtCuMemcpyDtoH_ptds;
  table.cuMemcpyDtoD_v2 = rtCuMemcpyDtoD;
  table.cuMemcpyDtoD_v2_ptds = rtCuMemcpyDtoD_ptds;
  table.cuMemcpyHtoDAsync_v2_ptsz = rtCuMemcpyHtoDAsync_ptsz;
  table.cuMemcpyDtoHAsync_v2_ptsz = rtCuMemcpyDtoHAsync_ptsz;
  table.cuMemcpyDtoDAsync_v2_ptsz = rtCuMemcpyDtoDAsync_ptsz;
  table.cuMemcpyAsync_ptsz = rtCuMemcpyAsync_ptsz;
  table.cuMemsetD8Async_ptsz = rtCuMemsetD8Async_ptsz;
  table.cuMemsetD16Async = rtCuMemsetD16Async;
  table.cuMemsetD16Async_ptsz = rtCuMemsetD16Async_ptsz;
  table.cuMemsetD32Async_ptsz = rtCuMemsetD32Async_ptsz;
  table.cuStreamSynchronize_ptsz = rtCuStreamSynchronize_ptsz;
  table.cuStreamWaitEvent_ptsz = rtCuStreamWaitEvent_ptsz;
  table.cuEventRecord_ptsz = rtCuEventRecord_ptsz;
  table.cuEventRecordWithFlags = rtCuEventRecordWithFlags;
  table.cuEventRecordWithFlags_ptsz = rtCuEventRecordWithFlags_ptsz;
  table.cuMemFree_v2 = rtCuMemFree;
  // Left below: allocation, context switches and entry points (no GPU work of their own).
}

// ---- NCCL ---------------------------------------------------------------------------------------

trace::DataType dataTypeOf(ncclDataType_t t) {
  const int v = static_cast<int>(t);
  return v >= 0 && v <= static_cast<int>(trace::DataType::Float8e5m2) ? static_cast<trace::DataType>(v)
                                                                     : trace::DataType::Unknown;
}
trace::RedOp redOpOf(ncclRedOp_t op) {
  const int v = static_cast<int>(op);
  return v >= 0 && v <= static_cast<int>(trace::RedOp::Avg) ? static_cast<trace::RedOp>(v) : trace::RedOp::Unknown;
}

// A collective through the runtime; a failure of something the runtime issued earlier for the
// application is reported by this call.
template <class F>
ncclResult_t collective(trace::CollType type, const void* send, void* recv, size_t count, ncclDataType_t dtype,
                        ncclRedOp_t op, int root_or_peer, ncclComm_t comm, cudaStream_t stream, F&& original) {
  PlanRuntime* rt = PlanRuntime::forCall();
  if (rt == nullptr) return original();
  Call c = makeCall(CallKind::Collective, streamOf(stream));
  tuner::CollectiveArgs& a = c.collective;
  a.comm = address(comm);
  a.comm_index = rt->communicatorIndex(comm);
  a.comm_size = rt->communicatorSize(comm);
  a.type = type;
  a.dtype = dataTypeOf(dtype);
  a.op = redOpOf(op);
  a.root_or_peer = root_or_peer;
  a.count = count;
  a.send = address(send);
  a.recv = address(recv);
  auto thunk = [&](StreamHandle) -> int { return static_cast<int>(original()); };
  const auto result = static_cast<ncclResult_t>(rt->run(c, PlanRuntime::Original(thunk)));
  return result != ncclSuccess ? result : rt->stickyError();
}

ncclResult_t rtNcclAllReduce(const void* s, void* r, size_t n, ncclDataType_t t, ncclRedOp_t op, ncclComm_t c,
                             cudaStream_t st) noexcept {
  return collective(trace::CollType::AllReduce, s, r, n, t, op, -1, c, st,
                    [&] { return ncclNext()->ncclAllReduce(s, r, n, t, op, c, st); });
}
ncclResult_t rtNcclBroadcast(const void* s, void* r, size_t n, ncclDataType_t t, int root, ncclComm_t c,
                             cudaStream_t st) noexcept {
  return collective(trace::CollType::Broadcast, s, r, n, t, ncclSum, root, c, st,
                    [&] { return ncclNext()->ncclBroadcast(s, r, n, t, root, c, st); });
}
ncclResult_t rtNcclBcast(void* b, size_t n, ncclDataType_t t, int root, ncclComm_t c, cudaStream_t st) noexcept {
  return collective(trace::CollType::Broadcast, b, b, n, t, ncclSum, root, c, st,
                    [&] { return ncclNext()->ncclBcast(b, n, t, root, c, st); });
}
ncclResult_t rtNcclReduce(const void* s, void* r, size_t n, ncclDataType_t t, ncclRedOp_t op, int root, ncclComm_t c,
                          cudaStream_t st) noexcept {
  return collective(trace::CollType::Reduce, s, r, n, t, op, root, c, st,
                    [&] { return ncclNext()->ncclReduce(s, r, n, t, op, root, c, st); });
}
ncclResult_t rtNcclAllGather(const void* s, void* r, size_t n, ncclDataType_t t, ncclComm_t c, cudaStream_t st) noexcept {
  return collective(trace::CollType::AllGather, s, r, n, t, ncclSum, -1, c, st,
                    [&] { return ncclNext()->ncclAllGather(s, r, n, t, c, st); });
}
ncclResult_t rtNcclReduceScatter(const void* s, void* r, size_t n, ncclDataType_t t, ncclRedOp_t op, ncclComm_t c,
                                 cudaStream_t st) noexcept {
  return collective(trace::CollType::ReduceScatter, s, r, n, t, op, -1, c, st,
                    [&] { return ncclNext()->ncclReduceScatter(s, r, n, t, op, c, st); });
}
ncclResult_t rtNcclAlltoAll(const void* s, void* r, size_t n, ncclDataType_t t, ncclComm_t c, cudaStream_t st) noexcept {
  // Count per peer: both buffers span count * ranks elements, as an all-gather's receive does.
  return collective(trace::CollType::AllToAll, s, r, n, t, ncclSum, -1, c, st,
                    [&] { return ncclNext()->ncclAlltoAll(s, r, n, t, c, st); });
}
ncclResult_t rtNcclGather(const void* s, void* r, size_t n, ncclDataType_t t, int root, ncclComm_t c,
                          cudaStream_t st) noexcept {
  return collective(trace::CollType::Gather, s, r, n, t, ncclSum, root, c, st,
                    [&] { return ncclNext()->ncclGather(s, r, n, t, root, c, st); });
}
ncclResult_t rtNcclScatter(const void* s, void* r, size_t n, ncclDataType_t t, int root, ncclComm_t c,
                           cudaStream_t st) noexcept {
  return collective(trace::CollType::Scatter, s, r, n, t, ncclSum, root, c, st,
                    [&] { return ncclNext()->ncclScatter(s, r, n, t, root, c, st); });
}
ncclResult_t rtNcclSend(const void* s, size_t n, ncclDataType_t t, int peer, ncclComm_t c, cudaStream_t st) noexcept {
  return collective(trace::CollType::Send, s, nullptr, n, t, ncclSum, peer, c, st,
                    [&] { return ncclNext()->ncclSend(s, n, t, peer, c, st); });
}
ncclResult_t rtNcclRecv(void* r, size_t n, ncclDataType_t t, int peer, ncclComm_t c, cudaStream_t st) noexcept {
  return collective(trace::CollType::Recv, nullptr, r, n, t, ncclSum, peer, c, st,
                    [&] { return ncclNext()->ncclRecv(r, n, t, peer, c, st); });
}

template <class F>
ncclResult_t ncclRouted(CallKind kind, F&& original) {
  return route(makeCall(kind, tuner::kLegacyStream), [&](StreamHandle) { return original(); });
}
ncclResult_t rtNcclGroupStart() noexcept { return ncclRouted(CallKind::GroupBegin, [] { return ncclNext()->ncclGroupStart(); }); }
ncclResult_t rtNcclGroupEnd() noexcept { return ncclRouted(CallKind::GroupEnd, [] { return ncclNext()->ncclGroupEnd(); }); }
ncclResult_t rtNcclCommFinalize(ncclComm_t c) noexcept {
  return ncclRouted(CallKind::CommEnd, [&] { return ncclNext()->ncclCommFinalize(c); });
}
ncclResult_t rtNcclCommDestroy(ncclComm_t c) noexcept {
  return ncclRouted(CallKind::CommEnd, [&] { return ncclNext()->ncclCommDestroy(c); });
}
ncclResult_t rtNcclCommAbort(ncclComm_t c) noexcept {
  return ncclRouted(CallKind::CommEnd, [&] { return ncclNext()->ncclCommAbort(c); });
}

// Communicator creation: made as asked, then known to the runtime (with its twin).
ncclResult_t created(ncclResult_t result, ncclComm_t* comm, int rank, int nranks) {
  if (result == ncclSuccess && comm != nullptr) PlanRuntime::instance().communicatorCreated(*comm, rank, nranks);
  return result;
}
ncclResult_t rtNcclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) noexcept {
  return created(ncclNext()->ncclCommInitRank(comm, nranks, id, rank), comm, rank, nranks);
}
ncclResult_t rtNcclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t* config) noexcept {
  return created(ncclNext()->ncclCommInitRankConfig(comm, nranks, id, rank, config), comm, rank, nranks);
}
ncclResult_t rtNcclCommInitRankScalable(ncclComm_t* comm, int nranks, int rank, int n, ncclUniqueId* ids,
                                        ncclConfig_t* config) noexcept {
  return created(ncclNext()->ncclCommInitRankScalable(comm, nranks, rank, n, ids, config), comm, rank, nranks);
}
ncclResult_t childCreated(ncclResult_t result, ncclComm_t* child) {
  if (result != ncclSuccess || child == nullptr || *child == nullptr) return result;
  int rank = -1, size = 0;
  if (const NcclHelpers* h = ncclHelpers()) {
    if (h->ncclCommUserRank != nullptr) h->ncclCommUserRank(*child, &rank);
    if (h->ncclCommCount != nullptr) h->ncclCommCount(*child, &size);
  }
  PlanRuntime::instance().communicatorCreated(*child, rank, size);
  return result;
}
ncclResult_t rtNcclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* child, ncclConfig_t* config) noexcept {
  return childCreated(ncclNext()->ncclCommSplit(comm, color, key, child, config), child);
}

void wrapNccl(NcclTable& table, const NcclTable& next) noexcept {
  runtimeNext().nccl = &next;
  table.ncclCommInitRank = rtNcclCommInitRank;
  table.ncclCommInitRankConfig = rtNcclCommInitRankConfig;
  table.ncclCommInitRankScalable = rtNcclCommInitRankScalable;
  table.ncclCommSplit = rtNcclCommSplit;
  table.ncclCommFinalize = rtNcclCommFinalize;
  table.ncclCommDestroy = rtNcclCommDestroy;
  table.ncclCommAbort = rtNcclCommAbort;
  table.ncclAllReduce = rtNcclAllReduce;
  table.ncclBroadcast = rtNcclBroadcast;
  table.ncclBcast = rtNcclBcast;
  table.ncclReduce = rtNcclReduce;
  table.ncclAllGather = rtNcclAllGather;
  table.ncclReduceScatter = rtNcclReduceScatter;
  table.ncclAlltoAll = rtNcclAlltoAll;
  table.ncclGather = rtNcclGather;
  table.ncclScatter = rtNcclScatter;
  table.ncclSend = rtNcclSend;
  table.ncclRecv = rtNcclRecv;
  table.ncclGroupStart = rtNcclGroupStart;
  table.ncclGroupEnd = rtNcclGroupEnd;
}

}  // namespace

bool tunerRuntimeRequested() noexcept {
  const char* plan = std::getenv("SYNCOPATE_PLAN");
  return plan != nullptr && *plan != '\0';
}

const Layer kTunerRuntimeLayer{"tuner runtime", wrapCudart, wrapDriver, wrapNccl};

}  // namespace syncopate::preload
