// Memory: device and pinned host allocation, registration, pointer attributes, and copies and
// memsets with CUDA's host-synchronisation rules ("API synchronization behavior" in the CUDA
// runtime documentation):
//  - cudaMemcpy returns once the copy is done, except device-to-device and peer copies, which
//    are asynchronous with respect to the host;
//  - cudaMemcpyAsync is asynchronous, except host-to-host copies and copies between device
//    and pageable (unregistered) host memory, which complete before returning (simgpu reads
//    pageable memory when the copy runs, so it cannot return earlier);
//  - cudaMemset is asynchronous unless it writes pinned host memory; cudaMemsetAsync always is.
#include "api.hpp"
#include "capture.hpp"

#include <simgpu/core/copies.hpp>
#include <simgpu/core/memory.hpp>
#include <simgpu/core/runtime.hpp>
#include <simgpu/core/streams.hpp>
#include <simgpu/core/symbols.hpp>

using namespace simgpu;
using namespace simgpu::cudart;

namespace {

bool pageable(const void* p) { return lookupPointer(p).kind == MemoryKind::Pageable; }

enum class Api { Sync, Async };

// Synchronous calls are refused during capture (they would wait for captured work); async
// ones on a capturing stream become graph nodes, except copies of pageable memory, which
// CUDA does not capture either.
std::optional<cudaError_t> captureOrRefuse(cudaStream_t stream, Api api, bool pageable_host,
                                           cudaGraphNodeType type, const Replay& replay) {
  if (!anyCapture()) return std::nullopt;
  if (api == Api::Sync) {
    if (auto refused = refuseUnsafeDuringCapture()) return refused;
    return refuseOnCapturingStream(stream);
  }
  if (pageable_host) return refuseOnCapturingStream(stream);
  return captureOp(stream, type, replay);
}

cudaError_t copy(void* dst, const void* src, const CopyShape& shape, cudaMemcpyKind kind,
                 cudaStream_t stream, Api api) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  CopyDirection direction = CopyDirection::None;
  if (cudaError_t err = copyDirection(dst, src, kind, &direction); err != cudaSuccess) return fail(err);
  const bool host_pageable =
      (direction == CopyDirection::HostToDevice || direction == CopyDirection::HostToHost ? pageable(src) : false) ||
      (direction == CopyDirection::DeviceToHost || direction == CopyDirection::HostToHost ? pageable(dst) : false);
  const Replay replay = [=](cudaStream_t s) { return enqueueCopy(dst, src, shape, direction, s, false); };
  if (auto c = captureOrRefuse(stream, api, host_pageable, cudaGraphNodeTypeMemcpy, replay)) return done(*c);
  bool wait = false;
  switch (direction) {
    case CopyDirection::HostToHost: wait = true; break;
    case CopyDirection::HostToDevice: wait = api == Api::Sync || pageable(src); break;
    case CopyDirection::DeviceToHost: wait = api == Api::Sync || pageable(dst); break;
    case CopyDirection::DeviceToDevice:
    case CopyDirection::Peer:
    case CopyDirection::None: wait = false; break;
  }
  return done(enqueueCopy(dst, src, shape, direction, stream, wait));
}

CopyShape row(std::size_t count) {
  CopyShape shape;
  shape.width = count;
  return shape;
}

CopyShape rect(std::size_t dpitch, std::size_t spitch, std::size_t width, std::size_t height) {
  CopyShape shape;
  shape.width = width;
  shape.height = height;
  shape.dst_pitch = dpitch;
  shape.src_pitch = spitch;
  return shape;
}

cudaError_t memset(void* dst, int value, const CopyShape& shape, cudaStream_t stream, Api api) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const MemoryKind kind = lookupPointer(dst).kind;
  const Replay replay = [=](cudaStream_t s) { return enqueueMemset(dst, value, shape, s, false); };
  if (auto c = captureOrRefuse(stream, api, kind == MemoryKind::Pageable, cudaGraphNodeTypeMemset, replay))
    return done(*c);
  const bool wait = api == Api::Sync && (kind == MemoryKind::PinnedHost || kind == MemoryKind::Registered);
  return done(enqueueMemset(dst, value, shape, stream, wait));
}

// The variable behind a symbol, checked against the range [offset, offset + count).
cudaError_t symbolRange(const void* symbol, std::size_t count, std::size_t offset, std::byte** out) {
  const DeviceVariable v = findVariable(symbol);
  if (v.size == 0) return cudaErrorInvalidSymbol;
  if (offset > v.size || count > v.size - offset) return cudaErrorInvalidValue;
  *out = static_cast<std::byte*>(v.address) + offset;
  return cudaSuccess;
}

cudaError_t toSymbol(const void* symbol, const void* src, std::size_t count, std::size_t offset,
                     cudaMemcpyKind kind, cudaStream_t stream, Api api) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return fail(cudaErrorInvalidMemcpyDirection);
  std::byte* target = nullptr;
  if (cudaError_t err = symbolRange(symbol, count, offset, &target); err != cudaSuccess) return fail(err);
  const CopyDirection direction =
      lookupPointer(src).kind == MemoryKind::Device ? CopyDirection::DeviceToDevice : CopyDirection::HostToDevice;
  const Replay replay = [=](cudaStream_t s) { return enqueueCopy(target, src, row(count), direction, s, false); };
  const bool host_pageable = direction == CopyDirection::HostToDevice && pageable(src);
  if (auto c = captureOrRefuse(stream, api, host_pageable, cudaGraphNodeTypeMemcpy, replay)) return done(*c);
  const bool wait = direction == CopyDirection::HostToDevice && (api == Api::Sync || pageable(src));
  return done(enqueueCopy(target, src, row(count), direction, stream, wait));
}

cudaError_t fromSymbol(void* dst, const void* symbol, std::size_t count, std::size_t offset,
                       cudaMemcpyKind kind, cudaStream_t stream, Api api) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return fail(cudaErrorInvalidMemcpyDirection);
  std::byte* source = nullptr;
  if (cudaError_t err = symbolRange(symbol, count, offset, &source); err != cudaSuccess) return fail(err);
  const CopyDirection direction =
      lookupPointer(dst).kind == MemoryKind::Device ? CopyDirection::DeviceToDevice : CopyDirection::DeviceToHost;
  const Replay replay = [=](cudaStream_t s) { return enqueueCopy(dst, source, row(count), direction, s, false); };
  const bool host_pageable = direction == CopyDirection::DeviceToHost && pageable(dst);
  if (auto c = captureOrRefuse(stream, api, host_pageable, cudaGraphNodeTypeMemcpy, replay)) return done(*c);
  const bool wait = direction == CopyDirection::DeviceToHost && (api == Api::Sync || pageable(dst));
  return done(enqueueCopy(dst, source, row(count), direction, stream, wait));
}

}  // namespace

extern "C" {

cudaError_t cudaMalloc(void** devPtr, size_t size) {
  if (devPtr == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (auto refused = refuseUnsafeDuringCapture()) return fail(*refused);
  return done(allocateDevice(currentDevice(), size, devPtr));
}

cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
  if (devPtr == nullptr || pitch == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  constexpr std::size_t kPitchAlignment = 512;
  *pitch = (width + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
  return done(allocateDevice(currentDevice(), *pitch * height, devPtr));
}

cudaError_t cudaFree(void* devPtr) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(freeDevice(devPtr));
}

cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  if (pHost == nullptr) return fail(cudaErrorInvalidValue);
  constexpr unsigned known = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
  if ((flags & ~known) != 0) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(allocateHost(currentDevice(), size, flags, pHost));
}

cudaError_t cudaMallocHost(void** ptr, size_t size) { return cudaHostAlloc(ptr, size, cudaHostAllocDefault); }

cudaError_t cudaFreeHost(void* ptr) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(freeHost(ptr));
}

cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  constexpr unsigned known = cudaHostRegisterPortable | cudaHostRegisterMapped |
                             cudaHostRegisterIoMemory | cudaHostRegisterReadOnly;
  if ((flags & ~known) != 0) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(registerHost(currentDevice(), ptr, size, flags));
}

cudaError_t cudaHostUnregister(void* ptr) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(unregisterHost(ptr));
}

// With unified addressing every page-locked allocation is mapped, at the same address.
cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
  if (pDevice == nullptr || flags != 0) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const PointerInfo info = lookupPointer(pHost);
  if (info.kind != MemoryKind::PinnedHost && info.kind != MemoryKind::Registered)
    return fail(cudaErrorInvalidValue);
  *pDevice = pHost;
  return cudaSuccess;
}

cudaError_t cudaHostGetFlags(unsigned int* pFlags, void* pHost) {
  if (pFlags == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const PointerInfo info = lookupPointer(pHost);
  if (info.kind != MemoryKind::PinnedHost) return fail(cudaErrorInvalidValue);
  *pFlags = info.flags;
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  if (attributes == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const PointerInfo info = lookupPointer(ptr);
  *attributes = cudaPointerAttributes{};
  void* p = const_cast<void*>(ptr);
  switch (info.kind) {
    case MemoryKind::Pageable:
      attributes->type = cudaMemoryTypeUnregistered;
      attributes->device = -2;
      attributes->hostPointer = p;
      break;
    case MemoryKind::PinnedHost:
    case MemoryKind::Registered:
      attributes->type = cudaMemoryTypeHost;
      attributes->device = info.device;
      attributes->hostPointer = p;
      attributes->devicePointer = p;
      break;
    case MemoryKind::Device:
      attributes->type = cudaMemoryTypeDevice;
      attributes->device = info.device;
      attributes->devicePointer = p;
      break;
    case MemoryKind::Managed:
      attributes->type = cudaMemoryTypeManaged;
      attributes->device = info.device;
      attributes->hostPointer = p;
      attributes->devicePointer = p;
      break;
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return copy(dst, src, row(count), kind, cudaStreamLegacy, Api::Sync);
}
cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return copy(dst, src, row(count), kind, cudaStreamPerThread, Api::Sync);
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  return copy(dst, src, row(count), kind, stream, Api::Async);
}
cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  return copy(dst, src, row(count), kind, perThread(stream), Api::Async);
}

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind) {
  return copy(dst, src, rect(dpitch, spitch, width, height), kind, cudaStreamLegacy, Api::Sync);
}
cudaError_t cudaMemcpy2D_ptds(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                              size_t height, cudaMemcpyKind kind) {
  return copy(dst, src, rect(dpitch, spitch, width, height), kind, cudaStreamPerThread, Api::Sync);
}
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                              size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
  return copy(dst, src, rect(dpitch, spitch, width, height), kind, stream, Api::Async);
}
cudaError_t cudaMemcpy2DAsync_ptsz(void* dst, size_t dpitch, const void* src, size_t spitch,
                                   size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
  return copy(dst, src, rect(dpitch, spitch, width, height), kind, perThread(stream), Api::Async);
}

// Peer copies run on the current device's stream; with one address space there is nothing
// else to arrange.
cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, size_t count,
                                cudaStream_t stream) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (!validDevice(dstDevice) || !validDevice(srcDevice)) return fail(cudaErrorInvalidDevice);
  const CopyDirection direction = dstDevice == srcDevice ? CopyDirection::DeviceToDevice : CopyDirection::Peer;
  const Replay replay = [=](cudaStream_t s) { return enqueueCopy(dst, src, row(count), direction, s, false); };
  if (auto c = captureOrRefuse(stream, Api::Async, false, cudaGraphNodeTypeMemcpy, replay)) return done(*c);
  return done(enqueueCopy(dst, src, row(count), direction, stream, false));
}

cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count) {
  return cudaMemcpyPeerAsync(dst, dstDevice, src, srcDevice, count, cudaStreamLegacy);
}

cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  return memset(devPtr, value, row(count), cudaStreamLegacy, Api::Sync);
}
cudaError_t cudaMemset_ptds(void* devPtr, int value, size_t count) {
  return memset(devPtr, value, row(count), cudaStreamPerThread, Api::Sync);
}
cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return memset(devPtr, value, row(count), stream, Api::Async);
}
cudaError_t cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return memset(devPtr, value, row(count), perThread(stream), Api::Async);
}
cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height) {
  return memset(devPtr, value, rect(pitch, 0, width, height), cudaStreamLegacy, Api::Sync);
}
cudaError_t cudaMemset2D_ptds(void* devPtr, size_t pitch, int value, size_t width, size_t height) {
  return memset(devPtr, value, rect(pitch, 0, width, height), cudaStreamPerThread, Api::Sync);
}
cudaError_t cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream) {
  return memset(devPtr, value, rect(pitch, 0, width, height), stream, Api::Async);
}
cudaError_t cudaMemset2DAsync_ptsz(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                                   cudaStream_t stream) {
  return memset(devPtr, value, rect(pitch, 0, width, height), perThread(stream), Api::Async);
}

cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
                               cudaMemcpyKind kind) {
  return toSymbol(symbol, src, count, offset, kind, cudaStreamLegacy, Api::Sync);
}
cudaError_t cudaMemcpyToSymbol_ptds(const void* symbol, const void* src, size_t count, size_t offset,
                                    cudaMemcpyKind kind) {
  return toSymbol(symbol, src, count, offset, kind, cudaStreamPerThread, Api::Sync);
}
cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset,
                                    cudaMemcpyKind kind, cudaStream_t stream) {
  return toSymbol(symbol, src, count, offset, kind, stream, Api::Async);
}
cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void* symbol, const void* src, size_t count, size_t offset,
                                         cudaMemcpyKind kind, cudaStream_t stream) {
  return toSymbol(symbol, src, count, offset, kind, perThread(stream), Api::Async);
}
cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset,
                                 cudaMemcpyKind kind) {
  return fromSymbol(dst, symbol, count, offset, kind, cudaStreamLegacy, Api::Sync);
}
cudaError_t cudaMemcpyFromSymbol_ptds(void* dst, const void* symbol, size_t count, size_t offset,
                                      cudaMemcpyKind kind) {
  return fromSymbol(dst, symbol, count, offset, kind, cudaStreamPerThread, Api::Sync);
}
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                      cudaMemcpyKind kind, cudaStream_t stream) {
  return fromSymbol(dst, symbol, count, offset, kind, stream, Api::Async);
}
cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void* dst, const void* symbol, size_t count, size_t offset,
                                           cudaMemcpyKind kind, cudaStream_t stream) {
  return fromSymbol(dst, symbol, count, offset, kind, perThread(stream), Api::Async);
}

cudaError_t cudaGetSymbolAddress(void** devPtr, const void* symbol) {
  if (devPtr == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const DeviceVariable v = findVariable(symbol);
  if (v.size == 0) return fail(cudaErrorInvalidSymbol);
  *devPtr = v.address;
  return cudaSuccess;
}

cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
  if (size == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const DeviceVariable v = findVariable(symbol);
  if (v.size == 0) return fail(cudaErrorInvalidSymbol);
  *size = v.size;
  return cudaSuccess;
}

}  // extern "C"
