// Shared helpers of the CUDA runtime layer: CUDA's last-error rules and the checks every call
// starts with. Each exported function returns through done() or fail(), so that an error is
// recorded as the thread's last error exactly as the CUDA runtime does.
#pragma once

#include <simgpu/core/memory_pools.hpp>
#include <simgpu/core/runtime.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace simgpu::cudart {

// Records a failure as the calling thread's last error (cudaErrorNotReady, which only says
// "not yet", is not an error) and returns it.
cudaError_t fail(cudaError_t error);
inline cudaError_t done(cudaError_t error) { return error == cudaSuccess ? error : fail(error); }

// Prints "simgpu: <what> is not simulated" the first time `what` is reported.
void reportNotSimulated(const std::string& what);

// The simulated machine is usable and the current device has no sticky error.
cudaError_t enter();

// The result of a host synchronisation, after what CUDA's stream-ordered allocator does at one:
// pools release the memory they hold above their release thresholds.
inline cudaError_t afterHostSync(cudaError_t sync) {
  if (sync == cudaSuccess) releasePoolMemoryAfterSync();
  return sync;
}

// The per-thread-default-stream variants (_ptsz, _ptds) treat stream 0 as the calling
// thread's per-thread default stream.
inline cudaStream_t perThread(cudaStream_t stream) { return stream == nullptr ? cudaStreamPerThread : stream; }

}  // namespace simgpu::cudart
