// Simulated memory: device memory and pinned host memory are ordinary host memory, registered
// here so that pointers can be classified (cudaMemcpyDefault, cudaPointerGetAttributes, pinned
// versus pageable copies) as CUDA's unified address space allows.
#pragma once

#include <simgpu/core/export.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace simgpu {

enum class MemoryKind : unsigned char {
  Pageable,    // memory simgpu did not allocate or register
  PinnedHost,  // cudaMallocHost / cudaHostAlloc
  Registered,  // cudaHostRegister
  Device,      // cudaMalloc, and the blocks of memory pools (memory_pools.hpp)
  Managed,     // cudaMallocManaged: one pointer valid on the host and on every device
};

struct PointerInfo {
  MemoryKind kind = MemoryKind::Pageable;
  int device = -1;  // the device it is on, or (host memory) that was current when it was allocated
  void* base = nullptr;
  std::size_t size = 0;
  unsigned flags = 0;  // cudaHostAlloc / cudaHostRegister / cudaMallocManaged flags
};

// cudaErrorMemoryAllocation when the device's profile memory would be exceeded.
SIMGPU_API cudaError_t allocateDevice(int device, std::size_t size, void** out);
// Managed memory is host memory like the rest; it does not count against the device's memory
// (devices with concurrent managed access may oversubscribe it). cudaErrorInvalidValue for a
// size of 0, as CUDA.
SIMGPU_API cudaError_t allocateManaged(int device, std::size_t size, unsigned flags, void** out);
// Device or managed memory, or a block a memory pool handed out (which goes back to its pool).
// Waits for the pointer's device to be idle first (as cudaFree does), so no pending op ever
// touches freed memory. cudaErrorInvalidValue for a pointer that is not an allocation's base.
SIMGPU_API cudaError_t freeDevice(void* ptr);
// Frees a device allocation at once, without waiting for the device (stream-ordered frees,
// which run when their stream reaches them).
SIMGPU_API cudaError_t releaseDeviceNow(void* ptr);
SIMGPU_API cudaError_t allocateHost(int device, std::size_t size, unsigned flags, void** out);
SIMGPU_API cudaError_t freeHost(void* ptr);
SIMGPU_API cudaError_t registerHost(int device, void* ptr, std::size_t size, unsigned flags);
SIMGPU_API cudaError_t unregisterHost(void* ptr);
// The allocation containing `ptr` (kind Pageable when none).
SIMGPU_API PointerInfo lookupPointer(const void* ptr);
SIMGPU_API std::size_t deviceBytesInUse(int device);

}  // namespace simgpu
