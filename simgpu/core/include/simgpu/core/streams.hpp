// Streams and events with CUDA's semantics. A cudaStream_t/cudaEvent_t made here is an opaque
// handle checked against the live set on every use (cudaErrorInvalidResourceHandle otherwise).
// Stream handles 0 and cudaStreamLegacy name the current device's legacy default stream,
// cudaStreamPerThread the calling thread's per-thread default stream.
#pragma once

#include <simgpu/core/export.hpp>
#include <simgpu/core/stream_op.hpp>

#include <cuda_runtime_api.h>

namespace simgpu {

// CUDA's priority range: lower numbers are higher priorities.
inline constexpr int kLeastStreamPriority = 0;
inline constexpr int kGreatestStreamPriority = -5;

struct StreamAttributes {
  int device = 0;
  unsigned flags = 0;  // cudaStreamDefault or cudaStreamNonBlocking
  int priority = 0;
  unsigned long long id = 0;  // unique in the process, as cudaStreamGetId
};

// Priorities outside the range are clamped, as CUDA does.
SIMGPU_API cudaError_t createStream(int device, unsigned flags, int priority, cudaStream_t* out);
// Returns at once; the stream finishes its pending work, then its resources go.
SIMGPU_API cudaError_t destroyStream(cudaStream_t stream);
SIMGPU_API cudaError_t queryStream(cudaStream_t stream);
SIMGPU_API cudaError_t synchronizeStream(cudaStream_t stream);
SIMGPU_API cudaError_t streamAttributes(cudaStream_t stream, StreamAttributes* out);
SIMGPU_API cudaError_t streamWaitEvent(cudaStream_t stream, cudaEvent_t event);
// Runs fn(user_data) on the stream's worker in stream order (cudaLaunchHostFunc).
SIMGPU_API cudaError_t launchHostFunc(cudaStream_t stream, void (*fn)(void*), void* user_data);

// enqueue(), then block until that op has completed; returns the device's sticky error, if any.
SIMGPU_API cudaError_t enqueueAndWait(cudaStream_t stream, StreamOp op);

SIMGPU_API cudaError_t createEvent(int device, unsigned flags, cudaEvent_t* out);
SIMGPU_API cudaError_t destroyEvent(cudaEvent_t event);
// Whether `event` is an event that exists (graph event nodes check theirs when added).
SIMGPU_API bool liveEvent(cudaEvent_t event);
SIMGPU_API cudaError_t recordEvent(cudaEvent_t event, cudaStream_t stream);
SIMGPU_API cudaError_t queryEvent(cudaEvent_t event);
SIMGPU_API cudaError_t synchronizeEvent(cudaEvent_t event);
SIMGPU_API cudaError_t eventElapsedMs(float* ms, cudaEvent_t start, cudaEvent_t end);
// Model time of the event's completed latest record (for tests and the CUPTI layer).
SIMGPU_API cudaError_t eventTimeNs(cudaEvent_t event, TimeNs* out);

}  // namespace simgpu
