// Managed memory (cudaMallocManaged) and the calls that guide it: stream attachment,
// prefetches and advice. simgpu's devices report concurrent managed access, as an H100 does:
// the host and every device may touch managed memory at any time, so attachment and advice
// change no result (on a GPU, only performance). simgpu checks their arguments as CUDA does and
// keeps nothing more. A prefetch is an op on its stream, as long as moving its range over the
// host link takes. Devices report no pageable memory access, so system-allocated memory is
// refused where CUDA accepts it only with that access; __managed__ variables are not simulated.
#include "api.hpp"
#include "capture.hpp"

#include <simgpu/core/copies.hpp>
#include <simgpu/core/memory.hpp>
#include <simgpu/core/runtime.hpp>
#include <simgpu/core/streams.hpp>

using namespace simgpu;
using namespace simgpu::cudart;

namespace {

bool isLegacyStream(cudaStream_t stream) { return stream == nullptr || stream == cudaStreamLegacy; }

// Whether [ptr, ptr + count) lies in one managed allocation.
bool managedRange(const void* ptr, std::size_t count) {
  const PointerInfo info = lookupPointer(ptr);
  if (info.kind != MemoryKind::Managed) return false;
  const auto offset = static_cast<std::size_t>(static_cast<const std::byte*>(ptr) - static_cast<const std::byte*>(info.base));
  return count <= info.size - offset;
}

// Where a location names, for prefetches and advice: a device, the host, or an error.
struct Place {
  cudaError_t error = cudaSuccess;
  bool host = false;
};

// `host_numa_current`: whether the advice or prefetch accepts "the NUMA node nearest the
// calling thread" as the host.
Place placeOf(const cudaMemLocation& location, const char* api, bool host_numa_current) {
  switch (location.type) {
    case cudaMemLocationTypeDevice:
      return validDevice(location.id) ? Place{} : Place{cudaErrorInvalidDevice, false};
    case cudaMemLocationTypeHost: return Place{cudaSuccess, true};
    case cudaMemLocationTypeHostNumaCurrent:
      return host_numa_current ? Place{cudaSuccess, true} : Place{cudaErrorInvalidValue, false};
    case cudaMemLocationTypeHostNuma:
      reportNotSimulated(std::string(api) + " to a host NUMA node");
      return Place{cudaErrorNotSupported, false};
    default: return Place{cudaErrorInvalidValue, false};
  }
}

cudaError_t prefetch(const void* devPtr, size_t count, cudaMemLocation location, unsigned flags, cudaStream_t stream) {
  if (flags != 0 || count == 0) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  StreamAttributes info;
  if (cudaError_t err = streamAttributes(stream, &info); err != cudaSuccess) return fail(err);
  if (!managedRange(devPtr, count)) return fail(cudaErrorInvalidValue);
  const Place place = placeOf(location, "cudaMemPrefetchAsync", true);
  if (place.error != cudaSuccess) return fail(place.error);
  if (auto refused = refuseOnCapturingStream(stream)) {
    if (*refused == cudaErrorStreamCaptureUnsupported) reportNotSimulated("cudaMemPrefetchAsync during stream capture");
    return fail(*refused);
  }
  return done(enqueuePrefetch(count, place.host ? CopyDirection::DeviceToHost : CopyDirection::HostToDevice, stream));
}

// Attachment is checked and then has nothing to do: every stream may reach managed memory.
cudaError_t attach(cudaStream_t stream, void* devPtr, size_t length, unsigned flags) {
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost && flags != cudaMemAttachSingle)
    return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  StreamAttributes info;
  if (cudaError_t err = streamAttributes(stream, &info); err != cudaSuccess) return fail(err);
  // The legacy stream is every stream of the device, not one a range can belong to.
  if (flags == cudaMemAttachSingle && isLegacyStream(stream)) return fail(cudaErrorInvalidValue);
  const PointerInfo memory = lookupPointer(devPtr);
  if (memory.kind != MemoryKind::Managed || memory.base != devPtr) return fail(cudaErrorInvalidValue);
  if (length != 0 && length != memory.size) return fail(cudaErrorInvalidValue);  // all of it, or nothing
  if (auto refused = refuseOnCapturingStream(stream)) {
    if (*refused == cudaErrorStreamCaptureUnsupported)
      reportNotSimulated("cudaStreamAttachMemAsync during stream capture");
    return fail(*refused);
  }
  return cudaSuccess;
}

}  // namespace

extern "C" {

cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  if (devPtr == nullptr) return fail(cudaErrorInvalidValue);
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (auto refused = refuseUnsafeDuringCapture()) return fail(*refused);
  return done(allocateManaged(currentDevice(), size, flags, devPtr));
}

cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void* devPtr, size_t length, unsigned int flags) {
  return attach(stream, devPtr, length, flags);
}
cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void* devPtr, size_t length, unsigned int flags) {
  return attach(perThread(stream), devPtr, length, flags);
}

cudaError_t cudaMemPrefetchAsync(const void* devPtr, size_t count, cudaMemLocation location, unsigned int flags,
                                 cudaStream_t stream) {
  return prefetch(devPtr, count, location, flags, stream);
}
cudaError_t cudaMemPrefetchAsync_ptsz(const void* devPtr, size_t count, cudaMemLocation location, unsigned int flags,
                                      cudaStream_t stream) {
  return prefetch(devPtr, count, location, flags, perThread(stream));
}

cudaError_t cudaMemAdvise(const void* devPtr, size_t count, cudaMemoryAdvise advice, cudaMemLocation location) {
  if (count == 0) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (!managedRange(devPtr, count)) return fail(cudaErrorInvalidValue);
  switch (advice) {
    case cudaMemAdviseSetReadMostly:
    case cudaMemAdviseUnsetReadMostly:
    case cudaMemAdviseUnsetPreferredLocation: return cudaSuccess;  // the location is ignored
    case cudaMemAdviseSetPreferredLocation: return done(placeOf(location, "cudaMemAdvise", true).error);
    case cudaMemAdviseSetAccessedBy:
    case cudaMemAdviseUnsetAccessedBy: {
      // Only a device or the host may be named as an accessor.
      if (location.type != cudaMemLocationTypeDevice && location.type != cudaMemLocationTypeHost)
        return fail(cudaErrorInvalidValue);
      return done(placeOf(location, "cudaMemAdvise", false).error);
    }
  }
  return fail(cudaErrorInvalidValue);
}

}  // extern "C"
