// Stream-ordered allocation and memory pools: cudaMallocAsync, cudaMallocFromPoolAsync,
// cudaFreeAsync, the devices' default and current pools, pools made and destroyed, their
// attributes and trimming (simgpu/core/memory_pools.hpp has the allocator's rules). Pools of
// device memory only: pools of host or managed memory, pools shared between processes, access
// from other devices and allocations captured into graphs (memory nodes) are not simulated.
#include "api.hpp"
#include "capture.hpp"

#include <simgpu/core/memory_pools.hpp>
#include <simgpu/core/runtime.hpp>

#include <algorithm>

using namespace simgpu;
using namespace simgpu::cudart;

namespace {

// A stream-ordered allocation or free on a capturing stream would be a memory node.
std::optional<cudaError_t> refuseMemoryNode(cudaStream_t stream, const char* api) {
  auto refused = refuseOnCapturingStream(stream);
  if (refused == cudaErrorStreamCaptureUnsupported)
    reportNotSimulated(std::string(api) + " during stream capture (graph memory nodes)");
  return refused;
}

cudaError_t mallocAsync(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream, const char* api) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (auto refused = refuseMemoryNode(stream, api)) return fail(*refused);
  return done(allocateAsync(pool, size, stream, ptr));
}

cudaError_t freeAsyncOn(void* devPtr, cudaStream_t stream) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (devPtr == nullptr) return cudaSuccess;
  if (auto refused = refuseMemoryNode(stream, "cudaFreeAsync")) return fail(*refused);
  return done(freeAsync(devPtr, stream));
}

// What cudaMemPoolCreate accepts: a pool of device memory on one device, not shared with other
// processes, with the reserved bytes zero as CUDA requires.
cudaError_t checkPoolProps(const cudaMemPoolProps& props) {
  if (props.allocType == cudaMemAllocationTypeManaged) {
    reportNotSimulated("memory pools of managed memory");
    return cudaErrorNotSupported;
  }
  if (props.allocType != cudaMemAllocationTypePinned) return cudaErrorInvalidValue;
  if (props.location.type == cudaMemLocationTypeHost || props.location.type == cudaMemLocationTypeHostNuma) {
    reportNotSimulated("memory pools of host memory");
    return cudaErrorNotSupported;
  }
  if (props.location.type != cudaMemLocationTypeDevice || !validDevice(props.location.id)) return cudaErrorInvalidValue;
  if (props.handleTypes != cudaMemHandleTypeNone) {
    reportNotSimulated("memory pools shared between processes (cudaMemPoolProps::handleTypes)");
    return cudaErrorNotSupported;
  }
  if (props.usage != 0) {
    reportNotSimulated("memory pools for a special usage (cudaMemPoolProps::usage)");
    return cudaErrorNotSupported;
  }
  const bool reserved_zero = std::all_of(std::begin(props.reserved), std::end(props.reserved),
                                         [](unsigned char b) { return b == 0; });
  if (props.win32SecurityAttributes != nullptr || !reserved_zero) return cudaErrorInvalidValue;
  return cudaSuccess;
}

}  // namespace

extern "C" {

cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  if (devPtr == nullptr) return fail(cudaErrorInvalidValue);
  return mallocAsync(devPtr, size, nullptr, hStream, "cudaMallocAsync");
}
cudaError_t cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream) {
  if (devPtr == nullptr) return fail(cudaErrorInvalidValue);
  return mallocAsync(devPtr, size, nullptr, perThread(hStream), "cudaMallocAsync");
}
cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) {
  if (ptr == nullptr || memPool == nullptr) return fail(cudaErrorInvalidValue);
  return mallocAsync(ptr, size, memPool, stream, "cudaMallocFromPoolAsync");
}
cudaError_t cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) {
  if (ptr == nullptr || memPool == nullptr) return fail(cudaErrorInvalidValue);
  return mallocAsync(ptr, size, memPool, perThread(stream), "cudaMallocFromPoolAsync");
}
cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream) { return freeAsyncOn(devPtr, hStream); }
cudaError_t cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) { return freeAsyncOn(devPtr, perThread(hStream)); }

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* memPool, int device) {
  if (memPool == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(defaultMemPool(device, memPool));
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* memPool, int device) {
  if (memPool == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(currentMemPool(device, memPool));
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(setCurrentMemPool(device, memPool));
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t* memPool, const cudaMemPoolProps* poolProps) {
  if (memPool == nullptr || poolProps == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (cudaError_t err = checkPoolProps(*poolProps); err != cudaSuccess) return fail(err);
  return done(createMemPool(poolProps->location.id, poolProps->maxSize, memPool));
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(destroyMemPool(memPool));
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, cudaMemPoolAttr attr, void* value) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(setMemPoolAttribute(memPool, attr, value));
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, cudaMemPoolAttr attr, void* value) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(getMemPoolAttribute(memPool, attr, value));
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(trimMemPool(memPool, minBytesToKeep));
}

}  // extern "C"
