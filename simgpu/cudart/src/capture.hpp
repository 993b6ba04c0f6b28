// Stream capture: while a stream captures, the work given to it is recorded into a graph
// (graph.hpp) instead of running; cudaGraphInstantiate/cudaGraphLaunch replay it. Every
// enqueuing call asks capture first (a single atomic load when nothing captures anywhere).
#pragma once

#include "graph.hpp"

#include <simgpu/core/kernels.hpp>

#include <cuda_runtime_api.h>

#include <optional>

namespace simgpu::cudart {

// Whether any stream of the process is capturing (cheap; for the fast path).
bool anyCapture();

// For an op about to be enqueued on `stream`: nothing if the stream does not capture (the op
// runs), else the result of recording it (`replay` becomes a node of the graph). Also refuses
// work on the legacy stream that would depend on a capturing blocking stream.
std::optional<cudaError_t> captureOp(cudaStream_t stream, cudaGraphNodeType type, const Replay& replay);
std::optional<cudaError_t> captureKernel(const KernelInfo& kernel, dim3 grid, dim3 block, void** args,
                                         std::size_t shared_bytes, cudaStream_t stream);
std::optional<cudaError_t> captureEventRecord(cudaEvent_t event, cudaStream_t stream);
std::optional<cudaError_t> captureEventWait(cudaStream_t stream, cudaEvent_t event, unsigned flags);

// Calls that may not run on a capturing stream (synchronisation, queries): an error, and the
// capture is invalidated. Nothing when the stream does not capture.
std::optional<cudaError_t> refuseOnCapturingStream(cudaStream_t stream);
// Calls that capture's mode forbids while a capture is under way ("potentially unsafe" calls:
// synchronous copies, cudaMalloc, device and event synchronisation).
std::optional<cudaError_t> refuseUnsafeDuringCapture();
// cudaEventQuery/cudaEventSynchronize on an event last recorded in a capturing stream.
std::optional<cudaError_t> refuseCapturedEvent(cudaEvent_t event);

}  // namespace simgpu::cudart
