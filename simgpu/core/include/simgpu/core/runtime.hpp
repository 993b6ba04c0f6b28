// The process-wide simulated machine: initialisation from the profile, devices, the calling
// thread's current device, device-wide synchronisation and reset. Every function is
// thread-safe. Errors are CUDA error codes, so the API layers pass them through unchanged.
#pragma once

#include <simgpu/core/export.hpp>
#include <simgpu/core/profile.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace simgpu {

// Loads the profile (env SIMGPU_PROFILE, else the built-in default) on first use. A bad profile
// prints one message naming the file and the field on stderr, and every later call returns
// cudaErrorInitializationError. Returns cudaErrorCudartUnloading once the process is exiting.
SIMGPU_API cudaError_t initialize();

// The active profile; only valid once initialize() returned cudaSuccess.
SIMGPU_API const Profile& profile();

SIMGPU_API int deviceCount();
// The calling thread's current device (0 until set).
SIMGPU_API int currentDevice();
SIMGPU_API cudaError_t setCurrentDevice(int device);
SIMGPU_API bool validDevice(int device);

// The device's sticky asynchronous error (cudaSuccess when none). Once set, every call that
// touches the device fails with it until resetDevice().
SIMGPU_API cudaError_t stickyError(int device);

// Blocks until every op enqueued on the device before the call has completed.
SIMGPU_API cudaError_t synchronizeDevice(int device);

// Abandons pending work (ops not started are dropped, running ones cut short), destroys the
// device's streams and events, frees its device memory and clears its sticky error.
SIMGPU_API cudaError_t resetDevice(int device);

SIMGPU_API void memoryInfo(int device, std::size_t* free_bytes, std::size_t* total_bytes);

// Flags set by cudaSetDeviceFlags (kept and reported; host waits block either way).
SIMGPU_API unsigned deviceFlags(int device);
SIMGPU_API void setDeviceFlags(int device, unsigned flags);

// Counters for documentation and tests.
struct Stats {
  std::uint64_t ops_completed = 0;
  std::uint64_t ops_abandoned = 0;
  // Ops whose body (a CPU implementation, a collective waiting for peers) took longer in real
  // time than its modelled duration: their model times stay as modelled.
  std::uint64_t ops_overran = 0;
};
SIMGPU_API Stats stats();

// How many ops are waiting for the device's compute engine (introspection for tests).
SIMGPU_API int computeEngineWaiters(int device);

}  // namespace simgpu
