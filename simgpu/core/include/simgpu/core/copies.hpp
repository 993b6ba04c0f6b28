// Memory copies and memsets as stream ops: the bytes really move (memory is host memory), and
// each op takes the time the profile gives it. Host-blocking rules (which copies return only
// once done) are the API layer's; this layer only enqueues.
#pragma once

#include <simgpu/core/export.hpp>
#include <simgpu/core/stream_op.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace simgpu {

// A rectangle of `height` rows of `width` bytes; a plain copy is one row.
struct CopyShape {
  std::size_t width = 0;
  std::size_t height = 1;
  std::size_t dst_pitch = 0;
  std::size_t src_pitch = 0;
  std::size_t bytes() const { return width * height; }
};

// Direction of a copy from its cudaMemcpyKind, looking pointers up for cudaMemcpyDefault (and
// telling apart device-to-device copies between two devices, which are peer copies).
// cudaErrorInvalidMemcpyDirection for an unknown kind.
SIMGPU_API cudaError_t copyDirection(const void* dst, const void* src, cudaMemcpyKind kind,
                                     CopyDirection* out);

// Modelled durations from the profile.
SIMGPU_API TimeNs copyDuration(CopyDirection direction, std::size_t bytes);
SIMGPU_API TimeNs memsetDuration(std::size_t bytes);

// With `wait`, the calling thread blocks until the op has completed (synchronous copies).
SIMGPU_API cudaError_t enqueueCopy(void* dst, const void* src, const CopyShape& shape,
                                   CopyDirection direction, cudaStream_t stream, bool wait);
SIMGPU_API cudaError_t enqueueMemset(void* dst, int value, const CopyShape& shape,
                                     cudaStream_t stream, bool wait);
// A memset of 1-, 2- or 4-byte elements (graph memset nodes): `shape.width` is in bytes, a
// multiple of `element_size`, and each element gets the low `element_size` bytes of `value`.
SIMGPU_API cudaError_t enqueueFill(void* dst, unsigned value, unsigned element_size, const CopyShape& shape,
                                   cudaStream_t stream);
// Moves `bytes` of managed memory over the host link (cudaMemPrefetchAsync), `direction`
// HostToDevice or DeviceToHost. simgpu does not track where pages are: every prefetch moves
// its whole range, the data staying where it is (host memory).
SIMGPU_API cudaError_t enqueuePrefetch(std::size_t bytes, CopyDirection direction, cudaStream_t stream);

}  // namespace simgpu
