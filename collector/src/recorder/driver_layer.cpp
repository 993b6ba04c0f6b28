// The recording layer over the CUDA driver: what libraries reach through cuGetProcAddress
// (cuBLAS, NCCL) or programs call directly. Same rows as the runtime layer; kernels are named
// by the driver (cuFuncGetName) on first sight.
#include "common/clock.hpp"
#include "dispatch/kernel_registry.hpp"
#include "recorder/layers.hpp"
#include "recorder/op_recording.hpp"

namespace syncopate::preload {
namespace {

constinit const DriverTable* next = nullptr;

using trace::OpKind;
constexpr trace::ApiDomain kDriver = trace::ApiDomain::CudaDriver;

CUstream perThread(CUstream stream) { return stream == nullptr ? CU_STREAM_PER_THREAD : stream; }

IssuedOp driverKernel(Recorder& recorder, CUfunction function, dim3 grid, dim3 block) {
  IssuedOp op;
  op.kind = OpKind::Kernel;
  op.shape = kernelShape(recorder, kernelRegistry().findOrNameDriverFunction(function), grid, block);
  return op;
}

template <class Call>
CUresult launch(ApiName api, CUstream stream, CUfunction function, dim3 grid, dim3 block, Call&& call) {
  return recordIssue(kDriver, api, stream, [&](Recorder& recorder) { return driverKernel(recorder, function, grid, block); },
                     call);
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream stream, void** params, void** extra) noexcept {
  return launch(ApiName::cuLaunchKernel, stream, f, dim3(gx, gy, gz), dim3(bx, by, bz),
                [&] { return next->cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra); });
}
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                             unsigned shared, CUstream stream, void** params, void** extra) noexcept {
  return launch(ApiName::cuLaunchKernel_ptsz, perThread(stream), f, dim3(gx, gy, gz), dim3(bx, by, bz),
                [&] { return next->cuLaunchKernel_ptsz(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra); });
}
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shared, CUstream stream, void** params) noexcept {
  return launch(ApiName::cuLaunchCooperativeKernel, stream, f, dim3(gx, gy, gz), dim3(bx, by, bz),
                [&] { return next->cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params); });
}
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                        unsigned bz, unsigned shared, CUstream stream, void** params) noexcept {
  return launch(ApiName::cuLaunchCooperativeKernel_ptsz, perThread(stream), f, dim3(gx, gy, gz), dim3(bx, by, bz),
                [&] { return next->cuLaunchCooperativeKernel_ptsz(f, gx, gy, gz, bx, by, bz, shared, stream, params); });
}
CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) noexcept {
  if (config == nullptr) return next->cuLaunchKernelEx(config, f, params, extra);
  return launch(ApiName::cuLaunchKernelEx, config->hStream, f, dim3(config->gridDimX, config->gridDimY, config->gridDimZ),
                dim3(config->blockDimX, config->blockDimY, config->blockDimZ),
                [&] { return next->cuLaunchKernelEx(config, f, params, extra); });
}
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) noexcept {
  if (config == nullptr) return next->cuLaunchKernelEx_ptsz(config, f, params, extra);
  return launch(ApiName::cuLaunchKernelEx_ptsz, perThread(config->hStream), f,
                dim3(config->gridDimX, config->gridDimY, config->gridDimZ),
                dim3(config->blockDimX, config->blockDimY, config->blockDimZ),
                [&] { return next->cuLaunchKernelEx_ptsz(config, f, params, extra); });
}

template <class Call>
CUresult copy(ApiName api, CUstream stream, std::uint64_t bytes, trace::MemcpyKind kind, std::uint64_t dst,
              std::uint64_t src, Call&& call) {
  return recordIssue(
      kDriver, api, stream,
      [&](Recorder&) {
        IssuedOp op;
        op.kind = OpKind::Memcpy;
        op.bytes = bytes;
        op.memcpy_kind = kind;
        op.pointer_count = 2;
        op.pointers[0] = dst;
        op.pointers[1] = src;
        return op;
      },
      call);
}

std::uint64_t host(const void* pointer) { return reinterpret_cast<std::uint64_t>(pointer); }
constexpr auto kHtoD = trace::MemcpyKind::HostToDevice;
constexpr auto kDtoH = trace::MemcpyKind::DeviceToHost;
constexpr auto kDtoD = trace::MemcpyKind::DeviceToDevice;

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t bytes) noexcept {
  return copy(ApiName::cuMemcpyHtoD_v2, nullptr, bytes, kHtoD, dst, host(src), [&] { return next->cuMemcpyHtoD_v2(dst, src, bytes); });
}
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void* src, size_t bytes) noexcept {
  return copy(ApiName::cuMemcpyHtoD_v2_ptds, CU_STREAM_PER_THREAD, bytes, kHtoD, dst, host(src),
              [&] { return next->cuMemcpyHtoD_v2_ptds(dst, src, bytes); });
}
CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t bytes) noexcept {
  return copy(ApiName::cuMemcpyDtoH_v2, nullptr, bytes, kDtoH, host(dst), src, [&] { return next->cuMemcpyDtoH_v2(dst, src, bytes); });
}
CUresult cuMemcpyDtoH_v2_ptds(void* dst, CUdeviceptr src, size_t bytes) noexcept {
  return copy(ApiName::cuMemcpyDtoH_v2_ptds, CU_STREAM_PER_THREAD, bytes, kDtoH, host(dst), src,
              [&] { return next->cuMemcpyDtoH_v2_ptds(dst, src, bytes); });
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes) noexcept {
  return copy(ApiName::cuMemcpyDtoD_v2, nullptr, bytes, kDtoD, dst, src, [&] { return next->cuMemcpyDtoD_v2(dst, src, bytes); });
}
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t bytes) noexcept {
  return copy(ApiName::cuMemcpyDtoD_v2_ptds, CU_STREAM_PER_THREAD, bytes, kDtoD, dst, src,
              [&] { return next->cuMemcpyDtoD_v2_ptds(dst, src, bytes); });
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) noexcept {
  return copy(ApiName::cuMemcpyHtoDAsync_v2, stream, bytes, kHtoD, dst, host(src),
              [&] { return next->cuMemcpyHtoDAsync_v2(dst, src, bytes, stream); });
}
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) noexcept {
  return copy(ApiName::cuMemcpyHtoDAsync_v2_ptsz, perThread(stream), bytes, kHtoD, dst, host(src),
              [&] { return next->cuMemcpyHtoDAsync_v2_ptsz(dst, src, bytes, stream); });
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) noexcept {
  return copy(ApiName::cuMemcpyDtoHAsync_v2, stream, bytes, kDtoH, host(dst), src,
              [&] { return next->cuMemcpyDtoHAsync_v2(dst, src, bytes, stream); });
}
CUresult cuMemcpyDtoHAsync_v2_ptsz(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) noexcept {
  return copy(ApiName::cuMemcpyDtoHAsync_v2_ptsz, perThread(stream), bytes, kDtoH, host(dst), src,
              [&] { return next->cuMemcpyDtoHAsync_v2_ptsz(dst, src, bytes, stream); });
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) noexcept {
  return copy(ApiName::cuMemcpyDtoDAsync_v2, stream, bytes, kDtoD, dst, src,
              [&] { return next->cuMemcpyDtoDAsync_v2(dst, src, bytes, stream); });
}
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) noexcept {
  return copy(ApiName::cuMemcpyDtoDAsync_v2_ptsz, perThread(stream), bytes, kDtoD, dst, src,
              [&] { return next->cuMemcpyDtoDAsync_v2_ptsz(dst, src, bytes, stream); });
}
// Unified addressing: the driver infers the direction.
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) noexcept {
  return copy(ApiName::cuMemcpyAsync, stream, bytes, trace::MemcpyKind::Unknown, dst, src,
              [&] { return next->cuMemcpyAsync(dst, src, bytes, stream); });
}
CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) noexcept {
  return copy(ApiName::cuMemcpyAsync_ptsz, perThread(stream), bytes, trace::MemcpyKind::Unknown, dst, src,
              [&] { return next->cuMemcpyAsync_ptsz(dst, src, bytes, stream); });
}

template <class Call>
CUresult fill(ApiName api, CUstream stream, std::uint64_t bytes, CUdeviceptr dst, Call&& call) {
  return recordIssue(
      kDriver, api, stream,
      [&](Recorder&) {
        IssuedOp op;
        op.kind = OpKind::Memset;
        op.bytes = bytes;
        op.pointer_count = 1;
        op.pointers[0] = dst;
        return op;
      },
      call);
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream) noexcept {
  return fill(ApiName::cuMemsetD8Async, stream, n, dst, [&] { return next->cuMemsetD8Async(dst, value, n, stream); });
}
CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream) noexcept {
  return fill(ApiName::cuMemsetD8Async_ptsz, perThread(stream), n, dst,
              [&] { return next->cuMemsetD8Async_ptsz(dst, value, n, stream); });
}
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t n, CUstream stream) noexcept {
  return fill(ApiName::cuMemsetD16Async, stream, n * 2, dst, [&] { return next->cuMemsetD16Async(dst, value, n, stream); });
}
CUresult cuMemsetD16Async_ptsz(CUdeviceptr dst, unsigned short value, size_t n, CUstream stream) noexcept {
  return fill(ApiName::cuMemsetD16Async_ptsz, perThread(stream), n * 2, dst,
              [&] { return next->cuMemsetD16Async_ptsz(dst, value, n, stream); });
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t n, CUstream stream) noexcept {
  return fill(ApiName::cuMemsetD32Async, stream, n * 4, dst, [&] { return next->cuMemsetD32Async(dst, value, n, stream); });
}
CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int value, size_t n, CUstream stream) noexcept {
  return fill(ApiName::cuMemsetD32Async_ptsz, perThread(stream), n * 4, dst,
              [&] { return next->cuMemsetD32Async_ptsz(dst, value, n, stream); });
}

template <class Call>
CUresult streamSync(ApiName api, CUstream stream, Call&& call) {
  return recordSync(kDriver, api, call, [&](Recorder& recorder, ThreadState& thread, std::uint32_t correlation,
                                              std::int64_t start, std::int64_t end) {
    trace::StreamId id = recorder.streamId(thread, recorder.currentDevice(thread), stream);
    return trace::Record(trace::OpRecord::syncStream(id, correlation, start, end));
  });
}
CUresult cuStreamSynchronize(CUstream stream) noexcept {
  return streamSync(ApiName::cuStreamSynchronize, stream, [&] { return next->cuStreamSynchronize(stream); });
}
CUresult cuStreamSynchronize_ptsz(CUstream stream) noexcept {
  return streamSync(ApiName::cuStreamSynchronize_ptsz, perThread(stream), [&] { return next->cuStreamSynchronize_ptsz(stream); });
}
CUresult cuEventSynchronize(CUevent event) noexcept {
  return recordSync(
      kDriver, ApiName::cuEventSynchronize, [&] { return next->cuEventSynchronize(event); },
      [&](Recorder& recorder, ThreadState&, std::uint32_t correlation, std::int64_t start, std::int64_t end) {
        return trace::Record(trace::OpRecord::syncEvent(recorder.catalog().eventId(host(event)), trace::kNoStream,
                                                        correlation, start, end));
      });
}
CUresult cuCtxSynchronize() noexcept {
  return recordSync(
      kDriver, ApiName::cuCtxSynchronize, [&] { return next->cuCtxSynchronize(); },
      [&](Recorder& recorder, ThreadState& thread, std::uint32_t correlation, std::int64_t start, std::int64_t end) {
        auto device = static_cast<std::uint32_t>(recorder.currentDevice(thread));
        return trace::Record(trace::OpRecord::syncDevice(trace::SyncKind::Context, device, correlation, start, end));
      });
}

CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) noexcept {
  return recordMarker(kDriver, ApiName::cuStreamWaitEvent, OpKind::StreamWait, stream, host(event),
                      [&] { return next->cuStreamWaitEvent(stream, event, flags); });
}
CUresult cuStreamWaitEvent_ptsz(CUstream stream, CUevent event, unsigned int flags) noexcept {
  return recordMarker(kDriver, ApiName::cuStreamWaitEvent_ptsz, OpKind::StreamWait, perThread(stream), host(event),
                      [&] { return next->cuStreamWaitEvent_ptsz(stream, event, flags); });
}
CUresult cuEventRecord(CUevent event, CUstream stream) noexcept {
  return recordMarker(kDriver, ApiName::cuEventRecord, OpKind::EventRecord, stream, host(event),
                      [&] { return next->cuEventRecord(event, stream); });
}
CUresult cuEventRecord_ptsz(CUevent event, CUstream stream) noexcept {
  return recordMarker(kDriver, ApiName::cuEventRecord_ptsz, OpKind::EventRecord, perThread(stream), host(event),
                      [&] { return next->cuEventRecord_ptsz(event, stream); });
}
CUresult cuEventRecordWithFlags(CUevent event, CUstream stream, unsigned int flags) noexcept {
  return recordMarker(kDriver, ApiName::cuEventRecordWithFlags, OpKind::EventRecord, stream, host(event),
                      [&] { return next->cuEventRecordWithFlags(event, stream, flags); });
}
CUresult cuEventRecordWithFlags_ptsz(CUevent event, CUstream stream, unsigned int flags) noexcept {
  return recordMarker(kDriver, ApiName::cuEventRecordWithFlags_ptsz, OpKind::EventRecord, perThread(stream), host(event),
                      [&] { return next->cuEventRecordWithFlags_ptsz(event, stream, flags); });
}

CUresult cuMemAlloc_v2(CUdeviceptr* pointer, size_t bytes) noexcept {
  Recorder* recorder = Recorder::activate();
  if (recorder == nullptr || !recorder->recording()) return next->cuMemAlloc_v2(pointer, bytes);
  ThreadState* thread = recorder->thread();
  if (thread == nullptr || thread->nccl_depth > 0) return next->cuMemAlloc_v2(pointer, bytes);
  std::int64_t start = monotonicNs();
  CUresult result = next->cuMemAlloc_v2(pointer, bytes);
  std::int64_t end = monotonicNs();
  recordHostCall(*recorder, *thread, kDriver, ApiName::cuMemAlloc_v2, result, start, end);
  if (result == CUDA_SUCCESS && pointer != nullptr) {
    trace::AllocRecord record;
    record.kind = trace::AllocKind::Device;
    record.device = static_cast<std::int16_t>(recorder->currentDevice(*thread));
    record.address = *pointer;
    record.bytes = bytes;
    record.time_ns = end;
    trace::Record packed = record;
    recorder->push(*thread, std::span<const trace::Record>(&packed, 1));
  }
  return result;
}

CUresult cuMemFree_v2(CUdeviceptr pointer) noexcept {
  Recorder* recorder = Recorder::activate();
  if (recorder == nullptr || !recorder->recording()) return next->cuMemFree_v2(pointer);
  ThreadState* thread = recorder->thread();
  if (thread == nullptr || thread->nccl_depth > 0) return next->cuMemFree_v2(pointer);
  std::int64_t start = monotonicNs();
  CUresult result = next->cuMemFree_v2(pointer);
  recordHostCall(*recorder, *thread, kDriver, ApiName::cuMemFree_v2, result, start, monotonicNs());
  if (result == CUDA_SUCCESS && pointer != 0) {
    trace::FreeRecord record;
    record.address = pointer;
    record.time_ns = start;
    trace::Record packed = record;
    recorder->push(*thread, std::span<const trace::Record>(&packed, 1));
  }
  return result;
}

// A context change may change the thread's current device: the cached one is forgotten.
template <class Call>
CUresult contextChange(Call&& call) {
  CUresult result = call();
  if (Recorder* recorder = Recorder::current()) {
    if (ThreadState* thread = recorder->thread()) recorder->forgetCurrentDevice(*thread);
  }
  return result;
}
CUresult cuCtxSetCurrent(CUcontext context) noexcept {
  return contextChange([&] { return next->cuCtxSetCurrent(context); });
}
CUresult cuCtxPushCurrent_v2(CUcontext context) noexcept {
  return contextChange([&] { return next->cuCtxPushCurrent_v2(context); });
}
CUresult cuCtxPopCurrent_v2(CUcontext* context) noexcept {
  return contextChange([&] { return next->cuCtxPopCurrent_v2(context); });
}

}  // namespace

void wrapDriverForRecording(DriverTable& table, const DriverTable& below) noexcept {
  next = &below;
  table.cuLaunchKernel = cuLaunchKernel;
  table.cuLaunchKernel_ptsz = cuLaunchKernel_ptsz;
  table.cuLaunchKernelEx = cuLaunchKernelEx;
  table.cuLaunchKernelEx_ptsz = cuLaunchKernelEx_ptsz;
  table.cuLaunchCooperativeKernel = cuLaunchCooperativeKernel;
  table.cuLaunchCooperativeKernel_ptsz = cuLaunchCooperativeKernel_ptsz;
  table.cuMemcpyHtoD_v2 = cuMemcpyHtoD_v2;
  table.cuMemcpyHtoD_v2_ptds = cuMemcpyHtoD_v2_ptds;
  table.cuMemcpyDtoH_v2 = cuMemcpyDtoH_v2;
  table.cuMemcpyDtoH_v2_ptds = cuMemcpyDtoH_v2_ptds;
  table.cuMemcpyDtoD_v2 = cuMemcpyDtoD_v2;
  table.cuMemcpyDtoD_v2_ptds = cuMemcpyDtoD_v2_ptds;
  table.cuMemcpyHtoDAsync_v2 = cuMemcpyHtoDAsync_v2;
  table.cuMemcpyHtoDAsync_v2_ptsz = cuMemcpyHtoDAsync_v2_ptsz;
  table.cuMemcpyDtoHAsync_v2 = cuMemcpyDtoHAsync_v2;
  table.cuMemcpyDtoHAsync_v2_ptsz = cuMemcpyDtoHAsync_v2_ptsz;
  table.cuMemcpyDtoDAsync_v2 = cuMemcpyDtoDAsync_v2;
  table.cuMemcpyDtoDAsync_v2_ptsz = cuMemcpyDtoDAsync_v2_ptsz;
  table.cuMemcpyAsync = cuMemcpyAsync;
  table.cuMemcpyAsync_ptsz = cuMemcpyAsync_ptsz;
  table.cuMemsetD8Async = cuMemsetD8Async;
  table.cuMemsetD8Async_ptsz = cuMemsetD8Async_ptsz;
  table.cuMemsetD16Async = cuMemsetD16Async;
  table.cuMemsetD16Async_ptsz = cuMemsetD16Async_ptsz;
  table.cuMemsetD32Async = cuMemsetD32Async;
  table.cuMemsetD32Async_ptsz = cuMemsetD32Async_ptsz;
  table.cuStreamSynchronize = cuStreamSynchronize;
  table.cuStreamSynchronize_ptsz = cuStreamSynchronize_ptsz;
  table.cuStreamWaitEvent = cuStreamWaitEvent;
  table.cuStreamWaitEvent_ptsz = cuStreamWaitEvent_ptsz;
  table.cuEventRecord = cuEventRecord;
  table.cuEventRecord_ptsz = cuEventRecord_ptsz;
  table.cuEventRecordWithFlags = cuEventRecordWithFlags;
  table.cuEventRecordWithFlags_ptsz = cuEventRecordWithFlags_ptsz;
  table.cuEventSynchronize = cuEventSynchronize;
  table.cuCtxSynchronize = cuCtxSynchronize;
  table.cuMemAlloc_v2 = cuMemAlloc_v2;
  table.cuMemFree_v2 = cuMemFree_v2;
  table.cuCtxSetCurrent = cuCtxSetCurrent;
  table.cuCtxPushCurrent_v2 = cuCtxPushCurrent_v2;
  table.cuCtxPopCurrent_v2 = cuCtxPopCurrent_v2;
}

}  // namespace syncopate::preload
