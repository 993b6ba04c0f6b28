// The recording layer over the CUDA runtime: launches, copies, fills, stream waits and event
// records are recorded as ops with their host calls; synchronising calls as HostSync ops;
// allocations as allocation rows. Calls are always made, recorded or not; a call the recorder
// cannot describe is still made and recorded as a host call.
#include "recorder/layers.hpp"

#include "common/clock.hpp"
#include "dispatch/kernel_registry.hpp"
#include "recorder/op_recording.hpp"

namespace syncopate::preload {
namespace {

constinit const CudartTable* next = nullptr;

using trace::ApiDomain;
using trace::OpKind;
constexpr ApiDomain kRuntime = ApiDomain::CudaRuntime;

// A per-thread-default-stream entry point (_ptsz/_ptds) means that stream by stream 0.
cudaStream_t perThread(cudaStream_t stream) { return stream == nullptr ? cudaStreamPerThread : stream; }

std::uint64_t address(const void* pointer) { return reinterpret_cast<std::uint64_t>(pointer); }

// ---- Launches -------------------------------------------------------------------------------

IssuedOp kernelOp(Recorder& recorder, const KernelInfo* kernel, dim3 grid, dim3 block, void** args) {
  IssuedOp op;
  op.kind = OpKind::Kernel;
  op.shape = kernelShape(recorder, kernel, grid, block);
  op.kernel = kernel;
  op.kernel_args = args;
  return op;
}

cudaError_t launchByHandle(ApiName api, cudaError_t (*real)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t),
                           cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream,
                           cudaStream_t timed_stream) {
  return recordIssue(
      kRuntime, api, timed_stream,
      [&](Recorder& recorder) { return kernelOp(recorder, kernelRegistry().findLaunched(kernel), grid, block, args); },
      [&] { return real(kernel, grid, block, args, shared, stream); });
}

cudaError_t launchByFunction(ApiName api, cudaError_t (*real)(const void*, dim3, dim3, void**, size_t, cudaStream_t),
                             const void* func, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream,
                             cudaStream_t timed_stream) {
  return recordIssue(
      kRuntime, api, timed_stream,
      [&](Recorder& recorder) {
        return kernelOp(recorder, kernelRegistry().findOrNameRuntimeFunction(func), grid, block, args);
      },
      [&] { return real(func, grid, block, args, shared, stream); });
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream) noexcept {
  return launchByHandle(ApiName::__cudaLaunchKernel, next->__cudaLaunchKernel, kernel, grid, block, args, shared, stream, stream);
}
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                    cudaStream_t stream) noexcept {
  return launchByHandle(ApiName::__cudaLaunchKernel_ptsz, next->__cudaLaunchKernel_ptsz, kernel, grid, block, args, shared,
                        stream, perThread(stream));
}
cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream) noexcept {
  return launchByFunction(ApiName::cudaLaunchKernel, next->cudaLaunchKernel, func, grid, block, args, shared, stream, stream);
}
cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                                  cudaStream_t stream) noexcept {
  return launchByFunction(ApiName::cudaLaunchKernel_ptsz, next->cudaLaunchKernel_ptsz, func, grid, block, args, shared,
                          stream, perThread(stream));
}
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                                        cudaStream_t stream) noexcept {
  return launchByFunction(ApiName::cudaLaunchCooperativeKernel, next->cudaLaunchCooperativeKernel, func, grid, block, args,
                          shared, stream, stream);
}
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                                             cudaStream_t stream) noexcept {
  return launchByFunction(ApiName::cudaLaunchCooperativeKernel_ptsz, next->cudaLaunchCooperativeKernel_ptsz, func, grid,
                          block, args, shared, stream, perThread(stream));
}

cudaError_t launchEx(ApiName api, cudaError_t (*real)(const cudaLaunchConfig_t*, const void*, void**),
                     const cudaLaunchConfig_t* config, const void* func, void** args, bool per_thread) {
  if (config == nullptr) return real(config, func, args);
  cudaStream_t stream = per_thread ? perThread(config->stream) : config->stream;
  return recordIssue(
      kRuntime, api, stream,
      [&](Recorder& recorder) {
        return kernelOp(recorder, kernelRegistry().findOrNameRuntimeFunction(func), config->gridDim, config->blockDim, args);
      },
      [&] { return real(config, func, args); });
}
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) noexcept {
  return launchEx(ApiName::cudaLaunchKernelExC, next->cudaLaunchKernelExC, config, func, args, false);
}
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func, void** args) noexcept {
  return launchEx(ApiName::cudaLaunchKernelExC_ptsz, next->cudaLaunchKernelExC_ptsz, config, func, args, true);
}

// ---- Copies and fills ------------------------------------------------------------------------

IssuedOp copyOp(std::uint64_t bytes, trace::MemcpyKind kind, const void* dst, const void* src) {
  IssuedOp op;
  op.kind = OpKind::Memcpy;
  op.bytes = bytes;
  op.memcpy_kind = kind;
  op.pointer_count = 2;
  op.pointers[0] = address(dst);
  op.pointers[1] = address(src);
  return op;
}

IssuedOp fillOp(std::uint64_t bytes, const void* dst) {
  IssuedOp op;
  op.kind = OpKind::Memset;
  op.bytes = bytes;
  op.pointer_count = 1;
  op.pointers[0] = address(dst);
  return op;
}

template <class Call>
cudaError_t copy(ApiName api, cudaStream_t stream, std::uint64_t bytes, trace::MemcpyKind kind, const void* dst,
                 const void* src, Call&& call) {
  return recordIssue(kRuntime, api, stream, [&](Recorder&) { return copyOp(bytes, kind, dst, src); }, call);
}

template <class Call>
cudaError_t fill(ApiName api, cudaStream_t stream, std::uint64_t bytes, const void* dst, Call&& call) {
  return recordIssue(kRuntime, api, stream, [&](Recorder&) { return fillOp(bytes, dst); }, call);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) noexcept {
  return copy(ApiName::cudaMemcpy, nullptr, count, memcpyKindOf(kind), dst, src, [&] { return next->cudaMemcpy(dst, src, count, kind); });
}
cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count, cudaMemcpyKind kind) noexcept {
  return copy(ApiName::cudaMemcpy_ptds, cudaStreamPerThread, count, memcpyKindOf(kind), dst, src,
              [&] { return next->cudaMemcpy_ptds(dst, src, count, kind); });
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) noexcept {
  return copy(ApiName::cudaMemcpyAsync, stream, count, memcpyKindOf(kind), dst, src,
              [&] { return next->cudaMemcpyAsync(dst, src, count, kind, stream); });
}
cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) noexcept {
  return copy(ApiName::cudaMemcpyAsync_ptsz, perThread(stream), count, memcpyKindOf(kind), dst, src,
              [&] { return next->cudaMemcpyAsync_ptsz(dst, src, count, kind, stream); });
}
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind) noexcept {
  return copy(ApiName::cudaMemcpy2D, nullptr, width * height, memcpyKindOf(kind), dst, src,
              [&] { return next->cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind); });
}
cudaError_t cudaMemcpy2D_ptds(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind) noexcept {
  return copy(ApiName::cudaMemcpy2D_ptds, cudaStreamPerThread, width * height, memcpyKindOf(kind), dst, src,
              [&] { return next->cudaMemcpy2D_ptds(dst, dpitch, src, spitch, width, height, kind); });
}
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream) noexcept {
  return copy(ApiName::cudaMemcpy2DAsync, stream, width * height, memcpyKindOf(kind), dst, src,
              [&] { return next->cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream); });
}
cudaError_t cudaMemcpy2DAsync_ptsz(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                   size_t height, cudaMemcpyKind kind, cudaStream_t stream) noexcept {
  return copy(ApiName::cudaMemcpy2DAsync_ptsz, perThread(stream), width * height, memcpyKindOf(kind), dst, src,
              [&] { return next->cudaMemcpy2DAsync_ptsz(dst, dpitch, src, spitch, width, height, kind, stream); });
}
cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count) noexcept {
  return copy(ApiName::cudaMemcpyPeer, nullptr, count, trace::MemcpyKind::PeerToPeer, dst, src,
              [&] { return next->cudaMemcpyPeer(dst, dstDevice, src, srcDevice, count); });
}
cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, size_t count,
                                cudaStream_t stream) noexcept {
  return copy(ApiName::cudaMemcpyPeerAsync, stream, count, trace::MemcpyKind::PeerToPeer, dst, src,
              [&] { return next->cudaMemcpyPeerAsync(dst, dstDevice, src, srcDevice, count, stream); });
}
// Symbol copies: the symbol is the host shadow of a device variable, not a device address,
// so only the other side's pointer is an argument worth keeping.
cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind) noexcept {
  return copy(ApiName::cudaMemcpyToSymbol, nullptr, count, memcpyKindOf(kind), nullptr, src,
              [&] { return next->cudaMemcpyToSymbol(symbol, src, count, offset, kind); });
}
cudaError_t cudaMemcpyToSymbol_ptds(const void* symbol, const void* src, size_t count, size_t offset,
                                    cudaMemcpyKind kind) noexcept {
  return copy(ApiName::cudaMemcpyToSymbol_ptds, cudaStreamPerThread, count, memcpyKindOf(kind), nullptr, src,
              [&] { return next->cudaMemcpyToSymbol_ptds(symbol, src, count, offset, kind); });
}
cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind) noexcept {
  return copy(ApiName::cudaMemcpyFromSymbol, nullptr, count, memcpyKindOf(kind), dst, nullptr,
              [&] { return next->cudaMemcpyFromSymbol(dst, symbol, count, offset, kind); });
}
cudaError_t cudaMemcpyFromSymbol_ptds(void* dst, const void* symbol, size_t count, size_t offset,
                                      cudaMemcpyKind kind) noexcept {
  return copy(ApiName::cudaMemcpyFromSymbol_ptds, cudaStreamPerThread, count, memcpyKindOf(kind), dst, nullptr,
              [&] { return next->cudaMemcpyFromSymbol_ptds(dst, symbol, count, offset, kind); });
}
cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind,
                                    cudaStream_t stream) noexcept {
  return copy(ApiName::cudaMemcpyToSymbolAsync, stream, count, memcpyKindOf(kind), nullptr, src,
              [&] { return next->cudaMemcpyToSymbolAsync(symbol, src, count, offset, kind, stream); });
}
cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void* symbol, const void* src, size_t count, size_t offset,
                                         cudaMemcpyKind kind, cudaStream_t stream) noexcept {
  return copy(ApiName::cudaMemcpyToSymbolAsync_ptsz, perThread(stream), count, memcpyKindOf(kind), nullptr, src,
              [&] { return next->cudaMemcpyToSymbolAsync_ptsz(symbol, src, count, offset, kind, stream); });
}
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind,
                                      cudaStream_t stream) noexcept {
  return copy(ApiName::cudaMemcpyFromSymbolAsync, stream, count, memcpyKindOf(kind), dst, nullptr,
              [&] { return next->cudaMemcpyFromSymbolAsync(dst, symbol, count, offset, kind, stream); });
}
cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void* dst, const void* symbol, size_t count, size_t offset,
                                           cudaMemcpyKind kind, cudaStream_t stream) noexcept {
  return copy(ApiName::cudaMemcpyFromSymbolAsync_ptsz, perThread(stream), count, memcpyKindOf(kind), dst, nullptr,
              [&] { return next->cudaMemcpyFromSymbolAsync_ptsz(dst, symbol, count, offset, kind, stream); });
}

cudaError_t cudaMemset(void* ptr, int value, size_t count) noexcept {
  return fill(ApiName::cudaMemset, nullptr, count, ptr, [&] { return next->cudaMemset(ptr, value, count); });
}
cudaError_t cudaMemset_ptds(void* ptr, int value, size_t count) noexcept {
  return fill(ApiName::cudaMemset_ptds, cudaStreamPerThread, count, ptr, [&] { return next->cudaMemset_ptds(ptr, value, count); });
}
cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream) noexcept {
  return fill(ApiName::cudaMemsetAsync, stream, count, ptr, [&] { return next->cudaMemsetAsync(ptr, value, count, stream); });
}
cudaError_t cudaMemsetAsync_ptsz(void* ptr, int value, size_t count, cudaStream_t stream) noexcept {
  return fill(ApiName::cudaMemsetAsync_ptsz, perThread(stream), count, ptr,
              [&] { return next->cudaMemsetAsync_ptsz(ptr, value, count, stream); });
}
cudaError_t cudaMemset2D(void* ptr, size_t pitch, int value, size_t width, size_t height) noexcept {
  return fill(ApiName::cudaMemset2D, nullptr, width * height, ptr,
              [&] { return next->cudaMemset2D(ptr, pitch, value, width, height); });
}
cudaError_t cudaMemset2D_ptds(void* ptr, size_t pitch, int value, size_t width, size_t height) noexcept {
  return fill(ApiName::cudaMemset2D_ptds, cudaStreamPerThread, width * height, ptr,
              [&] { return next->cudaMemset2D_ptds(ptr, pitch, value, width, height); });
}
cudaError_t cudaMemset2DAsync(void* ptr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream) noexcept {
  return fill(ApiName::cudaMemset2DAsync, stream, width * height, ptr,
              [&] { return next->cudaMemset2DAsync(ptr, pitch, value, width, height, stream); });
}
cudaError_t cudaMemset2DAsync_ptsz(void* ptr, size_t pitch, int value, size_t width, size_t height,
                                   cudaStream_t stream) noexcept {
  return fill(ApiName::cudaMemset2DAsync_ptsz, perThread(stream), width * height, ptr,
              [&] { return next->cudaMemset2DAsync_ptsz(ptr, pitch, value, width, height, stream); });
}

// ---- Streams, events, synchronisation --------------------------------------------------------

// A stream created here is registered with its flags and priority, recording or not: it may
// be used once recording starts.
template <class Call>
cudaError_t createStream(ApiName api, cudaStream_t* stream, unsigned flags, int priority, Call&& call) {
  Recorder* recorder = Recorder::activate();
  std::int64_t start = monotonicNs();
  cudaError_t result = call();
  if (recorder == nullptr) return result;
  ThreadState* thread = recorder->thread();
  if (thread == nullptr) return result;
  if (result == cudaSuccess && stream != nullptr) {
    recorder->registerCreatedStream(recorder->currentDevice(*thread), *stream, flags, priority);
  }
  if (recorder->recording()) recordHostCall(*recorder, *thread, kRuntime, api, result, start, monotonicNs());
  return result;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) noexcept {
  return createStream(ApiName::cudaStreamCreate, stream, 0, 0, [&] { return next->cudaStreamCreate(stream); });
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) noexcept {
  return createStream(ApiName::cudaStreamCreateWithFlags, stream, flags, 0,
                      [&] { return next->cudaStreamCreateWithFlags(stream, flags); });
}
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) noexcept {
  return createStream(ApiName::cudaStreamCreateWithPriority, stream, flags, priority,
                      [&] { return next->cudaStreamCreateWithPriority(stream, flags, priority); });
}

// A call that is only a host call in the store.
template <class Call>
cudaError_t hostCall(ApiName api, Call&& call) {
  Recorder* recorder = Recorder::activate();
  if (recorder == nullptr || !recorder->recording()) return call();
  ThreadState* thread = recorder->thread();
  if (thread == nullptr || thread->nccl_depth > 0) return call();
  std::int64_t start = monotonicNs();
  cudaError_t result = call();
  recordHostCall(*recorder, *thread, kRuntime, api, result, start, monotonicNs());
  return result;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) noexcept {
  return hostCall(ApiName::cudaStreamDestroy, [&] { return next->cudaStreamDestroy(stream); });
}

template <class Call>
cudaError_t streamSync(ApiName api, cudaStream_t stream, Call&& call) {
  return recordSync(kRuntime, api, call, [&](Recorder& recorder, ThreadState& thread, std::uint32_t correlation,
                                               std::int64_t start, std::int64_t end) {
    trace::StreamId id = recorder.streamId(thread, recorder.currentDevice(thread), stream);
    return trace::Record(trace::OpRecord::syncStream(id, correlation, start, end));
  });
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream) noexcept {
  return streamSync(ApiName::cudaStreamSynchronize, stream, [&] { return next->cudaStreamSynchronize(stream); });
}
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) noexcept {
  return streamSync(ApiName::cudaStreamSynchronize_ptsz, perThread(stream),
                    [&] { return next->cudaStreamSynchronize_ptsz(stream); });
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) noexcept {
  return recordSync(
      kRuntime, ApiName::cudaEventSynchronize, [&] { return next->cudaEventSynchronize(event); },
      [&](Recorder& recorder, ThreadState&, std::uint32_t correlation, std::int64_t start, std::int64_t end) {
        return trace::Record(trace::OpRecord::syncEvent(recorder.catalog().eventId(address(event)), trace::kNoStream,
                                                        correlation, start, end));
      });
}

cudaError_t cudaDeviceSynchronize() noexcept {
  return recordSync(
      kRuntime, ApiName::cudaDeviceSynchronize, [&] { return next->cudaDeviceSynchronize(); },
      [&](Recorder& recorder, ThreadState& thread, std::uint32_t correlation, std::int64_t start, std::int64_t end) {
        auto device = static_cast<std::uint32_t>(recorder.currentDevice(thread));
        return trace::Record(trace::OpRecord::syncDevice(trace::SyncKind::Device, device, correlation, start, end));
      });
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) noexcept {
  return recordMarker(kRuntime, ApiName::cudaStreamWaitEvent, OpKind::StreamWait, stream, address(event),
                      [&] { return next->cudaStreamWaitEvent(stream, event, flags); });
}
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags) noexcept {
  return recordMarker(kRuntime, ApiName::cudaStreamWaitEvent_ptsz, OpKind::StreamWait, perThread(stream), address(event),
                      [&] { return next->cudaStreamWaitEvent_ptsz(stream, event, flags); });
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) noexcept {
  return recordMarker(kRuntime, ApiName::cudaEventRecord, OpKind::EventRecord, stream, address(event),
                      [&] { return next->cudaEventRecord(event, stream); });
}
cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) noexcept {
  return recordMarker(kRuntime, ApiName::cudaEventRecord_ptsz, OpKind::EventRecord, perThread(stream), address(event),
                      [&] { return next->cudaEventRecord_ptsz(event, stream); });
}
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) noexcept {
  return recordMarker(kRuntime, ApiName::cudaEventRecordWithFlags, OpKind::EventRecord, stream, address(event),
                      [&] { return next->cudaEventRecordWithFlags(event, stream, flags); });
}
cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream, unsigned int flags) noexcept {
  return recordMarker(kRuntime, ApiName::cudaEventRecordWithFlags_ptsz, OpKind::EventRecord, perThread(stream),
                      address(event), [&] { return next->cudaEventRecordWithFlags_ptsz(event, stream, flags); });
}

// The thread's current device decides where default-stream work goes: remembered here so the
// hot path never has to ask.
cudaError_t cudaSetDevice(int device) noexcept {
  Recorder* recorder = Recorder::current();
  std::int64_t start = monotonicNs();
  cudaError_t result = next->cudaSetDevice(device);
  if (recorder == nullptr) return result;
  if (ThreadState* thread = recorder->thread()) {
    if (result == cudaSuccess) recorder->setCurrentDevice(*thread, device);
    if (recorder->recording()) recordHostCall(*recorder, *thread, kRuntime, ApiName::cudaSetDevice, result, start, monotonicNs());
  }
  return result;
}

// ---- Memory ---------------------------------------------------------------------------------

template <class Call>
cudaError_t allocate(ApiName api, trace::AllocKind kind, bool on_device, void** pointer, std::uint64_t bytes, Call&& call) {
  Recorder* recorder = Recorder::activate();
  if (recorder == nullptr || !recorder->recording()) return call();
  ThreadState* thread = recorder->thread();
  if (thread == nullptr || thread->nccl_depth > 0) return call();
  std::int64_t start = monotonicNs();
  cudaError_t result = call();
  std::int64_t end = monotonicNs();
  recordHostCall(*recorder, *thread, kRuntime, api, result, start, end);
  if (result == cudaSuccess && pointer != nullptr) {
    trace::AllocRecord record;
    record.kind = kind;
    record.device = static_cast<std::int16_t>(on_device ? recorder->currentDevice(*thread) : -1);
    record.address = address(*pointer);
    record.bytes = bytes;
    record.time_ns = end;
    trace::Record packed = record;
    recorder->push(*thread, std::span<const trace::Record>(&packed, 1));
  }
  return result;
}

template <class Call>
cudaError_t release(ApiName api, const void* pointer, Call&& call) {
  Recorder* recorder = Recorder::activate();
  if (recorder == nullptr || !recorder->recording()) return call();
  ThreadState* thread = recorder->thread();
  if (thread == nullptr || thread->nccl_depth > 0) return call();
  std::int64_t start = monotonicNs();
  cudaError_t result = call();
  recordHostCall(*recorder, *thread, kRuntime, api, result, start, monotonicNs());
  if (result == cudaSuccess && pointer != nullptr) {
    trace::FreeRecord record;
    record.address = address(pointer);
    record.time_ns = start;
    trace::Record packed = record;
    recorder->push(*thread, std::span<const trace::Record>(&packed, 1));
  }
  return result;
}

cudaError_t cudaMalloc(void** ptr, size_t size) noexcept {
  return allocate(ApiName::cudaMalloc, trace::AllocKind::Device, true, ptr, size, [&] { return next->cudaMalloc(ptr, size); });
}
cudaError_t cudaFree(void* ptr) noexcept {
  return release(ApiName::cudaFree, ptr, [&] { return next->cudaFree(ptr); });
}
cudaError_t cudaMallocHost(void** ptr, size_t size) noexcept {
  return allocate(ApiName::cudaMallocHost, trace::AllocKind::Pinned, false, ptr, size, [&] { return next->cudaMallocHost(ptr, size); });
}
cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int flags) noexcept {
  return allocate(ApiName::cudaHostAlloc, trace::AllocKind::Pinned, false, ptr, size,
                  [&] { return next->cudaHostAlloc(ptr, size, flags); });
}
cudaError_t cudaFreeHost(void* ptr) noexcept {
  return release(ApiName::cudaFreeHost, ptr, [&] { return next->cudaFreeHost(ptr); });
}
cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int flags) noexcept {
  return allocate(ApiName::cudaMallocManaged, trace::AllocKind::Managed, true, ptr, size,
                  [&] { return next->cudaMallocManaged(ptr, size, flags); });
}
cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream) noexcept {
  return allocate(ApiName::cudaMallocAsync, trace::AllocKind::Async, true, ptr, size,
                  [&] { return next->cudaMallocAsync(ptr, size, stream); });
}
cudaError_t cudaMallocAsync_ptsz(void** ptr, size_t size, cudaStream_t stream) noexcept {
  return allocate(ApiName::cudaMallocAsync_ptsz, trace::AllocKind::Async, true, ptr, size,
                  [&] { return next->cudaMallocAsync_ptsz(ptr, size, stream); });
}
cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) noexcept {
  return release(ApiName::cudaFreeAsync, ptr, [&] { return next->cudaFreeAsync(ptr, stream); });
}
cudaError_t cudaFreeAsync_ptsz(void* ptr, cudaStream_t stream) noexcept {
  return release(ApiName::cudaFreeAsync_ptsz, ptr, [&] { return next->cudaFreeAsync_ptsz(ptr, stream); });
}

// ---- Graphs ---------------------------------------------------------------------------------

// While any stream captures, ops check whether theirs does before adding timing events (an
// event recorded into a capture would become part of the graph). Counted whether recording or
// not, since recording may start in the middle of a capture.
template <class Call>
cudaError_t beginCapture(ApiName api, Call&& call) {
  Recorder* recorder = Recorder::activate();
  cudaError_t result = hostCall(api, call);
  if (recorder != nullptr && result == cudaSuccess) recorder->captureStarted();
  return result;
}

template <class Call>
cudaError_t endCapture(ApiName api, cudaStream_t stream, Call&& call) {
  Recorder* recorder = Recorder::activate();
  bool was_capturing = recorder != nullptr && recorder->capturing(stream);
  cudaError_t result = hostCall(api, call);
  if (was_capturing) recorder->captureEnded();
  return result;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) noexcept {
  return beginCapture(ApiName::cudaStreamBeginCapture, [&] { return next->cudaStreamBeginCapture(stream, mode); });
}
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, cudaStreamCaptureMode mode) noexcept {
  return beginCapture(ApiName::cudaStreamBeginCapture_ptsz, [&] { return next->cudaStreamBeginCapture_ptsz(stream, mode); });
}
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) noexcept {
  return endCapture(ApiName::cudaStreamEndCapture, stream, [&] { return next->cudaStreamEndCapture(stream, graph); });
}
cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* graph) noexcept {
  return endCapture(ApiName::cudaStreamEndCapture_ptsz, perThread(stream),
                    [&] { return next->cudaStreamEndCapture_ptsz(stream, graph); });
}

template <class Call>
cudaError_t graphLaunch(ApiName api, Call&& call) {
  cudaError_t result = hostCall(api, call);
  if (Recorder* recorder = Recorder::current(); recorder != nullptr && recorder->recording() && result == cudaSuccess) {
    recorder->counters().graph_launches.fetch_add(1, std::memory_order_relaxed);
  }
  return result;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t graph, cudaStream_t stream) noexcept {
  return graphLaunch(ApiName::cudaGraphLaunch, [&] { return next->cudaGraphLaunch(graph, stream); });
}
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graph, cudaStream_t stream) noexcept {
  return graphLaunch(ApiName::cudaGraphLaunch_ptsz, [&] { return next->cudaGraphLaunch_ptsz(graph, stream); });
}

}  // namespace

void wrapCudartForRecording(CudartTable& table, const CudartTable& below) noexcept {
  next = &below;
  table.__cudaLaunchKernel = __cudaLaunchKernel;
  table.__cudaLaunchKernel_ptsz = __cudaLaunchKernel_ptsz;
  table.cudaLaunchKernel = cudaLaunchKernel;
  table.cudaLaunchKernel_ptsz = cudaLaunchKernel_ptsz;
  table.cudaLaunchKernelExC = cudaLaunchKernelExC;
  table.cudaLaunchKernelExC_ptsz = cudaLaunchKernelExC_ptsz;
  table.cudaLaunchCooperativeKernel = cudaLaunchCooperativeKernel;
  table.cudaLaunchCooperativeKernel_ptsz = cudaLaunchCooperativeKernel_ptsz;
  table.cudaMemcpy = cudaMemcpy;
  table.cudaMemcpy_ptds = cudaMemcpy_ptds;
  table.cudaMemcpyAsync = cudaMemcpyAsync;
  table.cudaMemcpyAsync_ptsz = cudaMemcpyAsync_ptsz;
  table.cudaMemcpy2D = cudaMemcpy2D;
  table.cudaMemcpy2D_ptds = cudaMemcpy2D_ptds;
  table.cudaMemcpy2DAsync = cudaMemcpy2DAsync;
  table.cudaMemcpy2DAsync_ptsz = cudaMemcpy2DAsync_ptsz;
  table.cudaMemcpyPeer = cudaMemcpyPeer;
  table.cudaMemcpyPeerAsync = cudaMemcpyPeerAsync;
  table.cudaMemcpyToSymbol = cudaMemcpyToSymbol;
  table.cudaMemcpyToSymbol_ptds = cudaMemcpyToSymbol_ptds;
  table.cudaMemcpyFromSymbol = cudaMemcpyFromSymbol;
  table.cudaMemcpyFromSymbol_ptds = cudaMemcpyFromSymbol_ptds;
  table.cudaMemcpyToSymbolAsync = cudaMemcpyToSymbolAsync;
  table.cudaMemcpyToSymbolAsync_ptsz = cudaMemcpyToSymbolAsync_ptsz;
  table.cudaMemcpyFromSymbolAsync = cudaMemcpyFromSymbolAsync;
  table.cudaMemcpyFromSymbolAsync_ptsz = cudaMemcpyFromSymbolAsync_ptsz;
  table.cudaMemset = cudaMemset;
  table.cudaMemset_ptds = cudaMemset_ptds;
  table.cudaMemsetAsync = cudaMemsetAsync;
  table.cudaMemsetAsync_ptsz = cudaMemsetAsync_ptsz;
  table.cudaMemset2D = cudaMemset2D;
  table.cudaMemset2D_ptds = cudaMemset2D_ptds;
  table.cudaMemset2DAsync = cudaMemset2DAsync;
  table.cudaMemset2DAsync_ptsz = cudaMemset2DAsync_ptsz;
  table.cudaStreamCreate = cudaStreamCreate;
  table.cudaStreamCreateWithFlags = cudaStreamCreateWithFlags;
  table.cudaStreamCreateWithPriority = cudaStreamCreateWithPriority;
  table.cudaStreamDestroy = cudaStreamDestroy;
  table.cudaStreamSynchronize = cudaStreamSynchronize;
  table.cudaStreamSynchronize_ptsz = cudaStreamSynchronize_ptsz;
  table.cudaStreamWaitEvent = cudaStreamWaitEvent;
  table.cudaStreamWaitEvent_ptsz = cudaStreamWaitEvent_ptsz;
  table.cudaEventRecord = cudaEventRecord;
  table.cudaEventRecord_ptsz = cudaEventRecord_ptsz;
  table.cudaEventRecordWithFlags = cudaEventRecordWithFlags;
  table.cudaEventRecordWithFlags_ptsz = cudaEventRecordWithFlags_ptsz;
  table.cudaEventSynchronize = cudaEventSynchronize;
  table.cudaDeviceSynchronize = cudaDeviceSynchronize;
  table.cudaSetDevice = cudaSetDevice;
  table.cudaMalloc = cudaMalloc;
  table.cudaFree = cudaFree;
  table.cudaMallocHost = cudaMallocHost;
  table.cudaHostAlloc = cudaHostAlloc;
  table.cudaFreeHost = cudaFreeHost;
  table.cudaMallocManaged = cudaMallocManaged;
  table.cudaMallocAsync = cudaMallocAsync;
  table.cudaMallocAsync_ptsz = cudaMallocAsync_ptsz;
  table.cudaFreeAsync = cudaFreeAsync;
  table.cudaFreeAsync_ptsz = cudaFreeAsync_ptsz;
  table.cudaStreamBeginCapture = cudaStreamBeginCapture;
  table.cudaStreamBeginCapture_ptsz = cudaStreamBeginCapture_ptsz;
  table.cudaStreamEndCapture = cudaStreamEndCapture;
  table.cudaStreamEndCapture_ptsz = cudaStreamEndCapture_ptsz;
  table.cudaGraphLaunch = cudaGraphLaunch;
  table.cudaGraphLaunch_ptsz = cudaGraphLaunch_ptsz;
}

}  // namespace syncopate::preload
