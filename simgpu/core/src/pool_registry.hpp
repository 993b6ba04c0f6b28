#pragma once

#include <cuda_runtime_api.h>

namespace simgpu::detail {

// What the rest of the core asks of the memory pools (memory_pools.cpp).

// Whether `ptr` is the base of a block a memory pool holds (in use, or freed and cached).
bool ownedByPool(const void* ptr);
// cudaFree of a pool's block, once the caller has waited for the device: the block goes back
// to its pool at once. cudaErrorInvalidValue when the block is not in use.
cudaError_t returnToPool(void* ptr);
// cudaDeviceReset: the device's pools forget their blocks (freed with the device's memory),
// the pools created on it are destroyed, and its default pool is current again.
void resetPools(int device);

}  // namespace simgpu::detail
