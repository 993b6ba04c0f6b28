// Stream-ordered allocation from memory pools (cudaMallocAsync, cudaFreeAsync, cudaMemPool*),
// with the rules of CUDA's stream-ordered allocator:
//  - an allocation is usable at once by later work of its stream; a free happens when its
//    stream reaches it, and its block then stays reserved by the pool (cached) until a host
//    synchronisation finds the pool above its release threshold, or the pool is trimmed;
//  - a block is handed out again only where no access the stream order allows can overlap
//    the new use: to later work of the stream that freed it (even before the free ran), or to
//    any stream once the free has run (opportunistic reuse; with that policy off, once a host
//    synchronisation came after it). simgpu never inserts dependencies between streams, so
//    the policies that allow that (and reuse that follows event dependencies) are kept and
//    reported but never needed: not reusing is always allowed.
// Blocks are device allocations (memory.hpp) of exactly the size asked for; a request takes the
// smallest block that fits among those it may reuse, else a new one.
#pragma once

#include <simgpu/core/export.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace simgpu {

// The device's default pool, which can be neither made nor destroyed.
SIMGPU_API cudaError_t defaultMemPool(int device, cudaMemPool_t* out);
// The pool cudaMallocAsync uses on the device (the default pool until set otherwise).
SIMGPU_API cudaError_t currentMemPool(int device, cudaMemPool_t* out);
// cudaErrorInvalidValue for a pool that is not alive or belongs to another device.
SIMGPU_API cudaError_t setCurrentMemPool(int device, cudaMemPool_t pool);
// A pool of device memory on `device`; `max_size` 0 means no limit but the device's memory.
SIMGPU_API cudaError_t createMemPool(int device, std::size_t max_size, cudaMemPool_t* out);
// Blocks still in use are released when they are freed. The current pool of a device reverts
// to its default pool. cudaErrorInvalidValue for a default pool or one that is not alive.
SIMGPU_API cudaError_t destroyMemPool(cudaMemPool_t pool);
// cudaMemPoolSetAttribute/GetAttribute: `value` points at an int (the reuse policies) or a
// std::uint64_t (the byte counts). The high watermarks may only be reset (set to 0); the
// current counts are read-only. cudaErrorInvalidValue otherwise.
SIMGPU_API cudaError_t setMemPoolAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, const void* value);
SIMGPU_API cudaError_t getMemPoolAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value);
// Releases cached blocks as long as the pool keeps at least `min_bytes_to_keep` reserved.
SIMGPU_API cudaError_t trimMemPool(cudaMemPool_t pool, std::size_t min_bytes_to_keep);
// What a host synchronisation does to every pool: cached blocks become reusable by any
// stream, and blocks above each pool's release threshold go back to the system.
SIMGPU_API void releasePoolMemoryAfterSync();

// `pool` null: the current pool of the stream's device. A size of 0 gives a null pointer.
// cudaErrorMemoryAllocation beyond the pool's maximum size or the device's memory.
SIMGPU_API cudaError_t allocateAsync(cudaMemPool_t pool, std::size_t size, cudaStream_t stream, void** out);
// Frees a pool's block when `stream` reaches the free; device memory from cudaMalloc is
// released then. cudaErrorInvalidValue for anything else, or a block already freed.
SIMGPU_API cudaError_t freeAsync(void* ptr, cudaStream_t stream);

}  // namespace simgpu
