// Memory pools: which blocks each pool reserves, which of them are in use, freed but not yet
// reached by their stream, or cached for reuse. Lock order: the pools' mutex is taken before
// the memory registry's and never held while enqueuing (the machine's mutex comes first where
// both are held: cudaDeviceReset resets the pools under it).
#include "pool_registry.hpp"

#include <simgpu/core/memory.hpp>
#include <simgpu/core/memory_pools.hpp>
#include <simgpu/core/runtime.hpp>
#include <simgpu/core/stream_op.hpp>
#include <simgpu/core/streams.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace simgpu {
namespace {

enum class BlockState : std::uint8_t {
  InUse,
  FreePending,  // cudaFreeAsync called, its stream has not reached it yet
  Cached,       // freed; reserved by the pool until released
};

struct Block {
  std::size_t size = 0;
  BlockState state = BlockState::InUse;
  unsigned long long free_stream = 0;  // FreePending: the id of the stream that frees it
  std::uint64_t free_generation = 0;   // FreePending: which free the pending op completes
  bool synchronized = false;           // Cached: a host synchronisation came after the free
};

struct Pool {
  int device = 0;
  bool is_default = false;
  bool alive = true;
  std::size_t max_size = 0;
  int reuse_follow_event_dependencies = 1;
  int reuse_allow_opportunistic = 1;
  int reuse_allow_internal_dependencies = 1;
  std::uint64_t release_threshold = 0;
  std::uint64_t reserved = 0, reserved_high = 0, used = 0, used_high = 0;
  std::map<std::uintptr_t, Block> blocks;  // by base address
};

struct Pools {
  std::mutex mu;
  std::vector<std::unique_ptr<Pool>> all;  // a destroyed pool stays until its last block goes
  std::vector<Pool*> defaults, current;    // by device
  std::uint64_t next_generation = 1;
};

Pools& pools() {
  static Pools* const p = new Pools();  // blocks may be freed by late static destructors
  return *p;
}

std::uintptr_t poolAddress(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

void ensureDevices(Pools& ps) {
  if (!ps.defaults.empty()) return;
  for (int d = 0; d < deviceCount(); ++d) {
    auto pool = std::make_unique<Pool>();
    pool->device = d;
    pool->is_default = true;
    ps.defaults.push_back(pool.get());
    ps.all.push_back(std::move(pool));
  }
  ps.current = ps.defaults;
}

Pool* alivePool(Pools& ps, cudaMemPool_t handle) {
  for (const auto& p : ps.all)
    if (p.get() == reinterpret_cast<Pool*>(handle)) return p->alive ? p.get() : nullptr;
  return nullptr;
}

struct Located {
  Pool* pool = nullptr;
  std::map<std::uintptr_t, Block>::iterator block;
};

Located findBlock(Pools& ps, const void* ptr) {
  for (const auto& p : ps.all) {
    auto it = p->blocks.find(poolAddress(ptr));
    if (it != p->blocks.end()) return {p.get(), it};
  }
  return {};
}

void forgetIfDone(Pools& ps, Pool* pool) {
  if (pool->alive || !pool->blocks.empty()) return;
  std::erase_if(ps.all, [&](const auto& p) { return p.get() == pool; });
}

// Gives a block's memory back to the system.
void release(Pool& pool, std::map<std::uintptr_t, Block>::iterator it) {
  releaseDeviceNow(reinterpret_cast<void*>(it->first));
  pool.reserved -= it->second.size;
  pool.blocks.erase(it);
}

// Releases cached blocks, lowest address first, while `keep(block)` says so.
template <class Keep>
void releaseCached(Pool& pool, Keep keep) {
  for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
    auto next = std::next(it);
    if (it->second.state == BlockState::Cached && !keep(it->second)) release(pool, it);
    it = next;
  }
}

// The smallest block `stream` may take for `size` bytes: one freed on that very stream (its
// later work follows the free), or one whose free has run.
std::map<std::uintptr_t, Block>::iterator reusable(Pool& pool, std::size_t size, unsigned long long stream) {
  auto best = pool.blocks.end();
  for (auto it = pool.blocks.begin(); it != pool.blocks.end(); ++it) {
    const Block& b = it->second;
    const bool allowed = (b.state == BlockState::FreePending && b.free_stream == stream) ||
                         (b.state == BlockState::Cached && (pool.reuse_allow_opportunistic != 0 || b.synchronized));
    if (allowed && b.size >= size && (best == pool.blocks.end() || b.size < best->second.size)) best = it;
  }
  return best;
}

void markUsed(Pool& pool, Block& block) {
  block.state = BlockState::InUse;
  pool.used += block.size;
  pool.used_high = std::max(pool.used_high, pool.used);
}

// The free op of a block: it is cached, or released if its pool is gone, unless the block
// was handed out again since (reused by the same stream before the free ran).
void completeFree(void* ptr, std::uint64_t generation) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mu);
  Located b = findBlock(ps, ptr);
  if (b.pool == nullptr || b.block->second.state != BlockState::FreePending ||
      b.block->second.free_generation != generation) {
    return;
  }
  if (!b.pool->alive) {
    release(*b.pool, b.block);
    forgetIfDone(ps, b.pool);
    return;
  }
  b.block->second.state = BlockState::Cached;
  b.block->second.synchronized = false;
}

// cudaMalloc's memory freed by cudaFreeAsync: released when the stream reaches the free.
cudaError_t freeDeviceMemoryAsync(void* ptr, cudaStream_t stream) {
  const PointerInfo info = lookupPointer(ptr);
  if (info.kind != MemoryKind::Device || info.base != ptr) return cudaErrorInvalidValue;
  StreamOp op;
  op.work_class = WorkClass::Marker;
  op.kind = OpKind::HostFunc;
  op.name = "cudaFreeAsync";
  op.body = [ptr](const OpContext&) {
    releaseDeviceNow(ptr);
    return OpTiming{};
  };
  return enqueue(stream, std::move(op));
}

// The device's default or current pool.
cudaError_t poolOf(int device, std::vector<Pool*> Pools::*which, cudaMemPool_t* out) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  if (!validDevice(device)) return cudaErrorInvalidDevice;
  Pools& ps = pools();
  std::lock_guard lock(ps.mu);
  ensureDevices(ps);
  *out = reinterpret_cast<cudaMemPool_t>((ps.*which)[static_cast<std::size_t>(device)]);
  return cudaSuccess;
}

}  // namespace

cudaError_t defaultMemPool(int device, cudaMemPool_t* out) { return poolOf(device, &Pools::defaults, out); }

cudaError_t currentMemPool(int device, cudaMemPool_t* out) { return poolOf(device, &Pools::current, out); }

cudaError_t setCurrentMemPool(int device, cudaMemPool_t handle) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  if (!validDevice(device)) return cudaErrorInvalidDevice;
  Pools& ps = pools();
  std::lock_guard lock(ps.mu);
  ensureDevices(ps);
  Pool* pool = alivePool(ps, handle);
  if (pool == nullptr || pool->device != device) return cudaErrorInvalidValue;
  ps.current[static_cast<std::size_t>(device)] = pool;
  return cudaSuccess;
}

cudaError_t createMemPool(int device, std::size_t max_size, cudaMemPool_t* out) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  if (!validDevice(device)) return cudaErrorInvalidDevice;
  Pools& ps = pools();
  std::lock_guard lock(ps.mu);
  ensureDevices(ps);
  auto pool = std::make_unique<Pool>();
  pool->device = device;
  pool->max_size = max_size;
  *out = reinterpret_cast<cudaMemPool_t>(pool.get());
  ps.all.push_back(std::move(pool));
  return cudaSuccess;
}

cudaError_t destroyMemPool(cudaMemPool_t handle) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Pools& ps = pools();
  std::lock_guard lock(ps.mu);
  Pool* pool = alivePool(ps, handle);
  if (pool == nullptr || pool->is_default) return cudaErrorInvalidValue;
  pool->alive = false;
  Pool*& current = ps.current[static_cast<std::size_t>(pool->device)];
  if (current == pool) current = ps.defaults[static_cast<std::size_t>(pool->device)];
  releaseCached(*pool, [](const Block&) { return false; });
  forgetIfDone(ps, pool);
  return cudaSuccess;
}

cudaError_t setMemPoolAttribute(cudaMemPool_t handle, cudaMemPoolAttr attr, const void* value) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  if (value == nullptr) return cudaErrorInvalidValue;
  Pools& ps = pools();
  std::lock_guard lock(ps.mu);
  Pool* pool = alivePool(ps, handle);
  if (pool == nullptr) return cudaErrorInvalidValue;
  // The reuse policies are ints, the byte counts 64-bit: read only what the attribute's type holds.
  auto flag = [&] { return *static_cast<const int*>(value) != 0 ? 1 : 0; };
  auto bytes = [&] { return *static_cast<const std::uint64_t*>(value); };
  switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies: pool->reuse_follow_event_dependencies = flag(); return cudaSuccess;
    case cudaMemPoolReuseAllowOpportunistic: pool->reuse_allow_opportunistic = flag(); return cudaSuccess;
    case cudaMemPoolReuseAllowInternalDependencies: pool->reuse_allow_internal_dependencies = flag(); return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold: pool->release_threshold = bytes(); return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:
      if (bytes() != 0) return cudaErrorInvalidValue;
      pool->reserved_high = pool->reserved;
      return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh:
      if (bytes() != 0) return cudaErrorInvalidValue;
      pool->used_high = pool->used;
      return cudaSuccess;
    default: return cudaErrorInvalidValue;  // the current counts are read-only
  }
}

cudaError_t getMemPoolAttribute(cudaMemPool_t handle, cudaMemPoolAttr attr, void* value) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  if (value == nullptr) return cudaErrorInvalidValue;
  Pools& ps = pools();
  std::lock_guard lock(ps.mu);
  const Pool* pool = alivePool(ps, handle);
  if (pool == nullptr) return cudaErrorInvalidValue;
  auto* flag = static_cast<int*>(value);
  auto* bytes = static_cast<std::uint64_t*>(value);
  switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies: *flag = pool->reuse_follow_event_dependencies; return cudaSuccess;
    case cudaMemPoolReuseAllowOpportunistic: *flag = pool->reuse_allow_opportunistic; return cudaSuccess;
    case cudaMemPoolReuseAllowInternalDependencies: *flag = pool->reuse_allow_internal_dependencies; return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold: *bytes = pool->release_threshold; return cudaSuccess;
    case cudaMemPoolAttrReservedMemCurrent: *bytes = pool->reserved; return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh: *bytes = pool->reserved_high; return cudaSuccess;
    case cudaMemPoolAttrUsedMemCurrent: *bytes = pool->used; return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh: *bytes = pool->used_high; return cudaSuccess;
  }
  return cudaErrorInvalidValue;
}

cudaError_t trimMemPool(cudaMemPool_t handle, std::size_t min_bytes_to_keep) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Pools& ps = pools();
  std::lock_guard lock(ps.mu);
  Pool* pool = alivePool(ps, handle);
  if (pool == nullptr) return cudaErrorInvalidValue;
  releaseCached(*pool, [&](const Block& b) { return pool->reserved - b.size < min_bytes_to_keep; });
  return cudaSuccess;
}

void releasePoolMemoryAfterSync() {
  Pools& ps = pools();
  std::lock_guard lock(ps.mu);
  for (const auto& p : ps.all) {
    for (auto& [base, block] : p->blocks)
      if (block.state == BlockState::Cached) block.synchronized = true;
    releaseCached(*p, [&](const Block&) { return p->reserved <= p->release_threshold; });
  }
}

cudaError_t allocateAsync(cudaMemPool_t handle, std::size_t size, cudaStream_t stream, void** out) {
  *out = nullptr;
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  StreamAttributes s;
  if (cudaError_t err = streamAttributes(stream, &s); err != cudaSuccess) return err;
  Pools& ps = pools();
  std::lock_guard lock(ps.mu);
  ensureDevices(ps);
  Pool* pool = handle == nullptr ? ps.current[static_cast<std::size_t>(s.device)] : alivePool(ps, handle);
  if (pool == nullptr) return cudaErrorInvalidValue;
  if (size == 0) return cudaSuccess;
  if (auto it = reusable(*pool, size, s.id); it != pool->blocks.end()) {
    markUsed(*pool, it->second);
    *out = reinterpret_cast<void*>(it->first);
    return cudaSuccess;
  }
  // Out of room (the pool's limit or the device's memory): cached blocks go back first.
  if (pool->max_size != 0 && pool->reserved + size > pool->max_size)
    releaseCached(*pool, [&](const Block&) { return pool->reserved + size <= pool->max_size; });
  if (pool->max_size != 0 && pool->reserved + size > pool->max_size) return cudaErrorMemoryAllocation;
  void* p = nullptr;
  cudaError_t err = allocateDevice(pool->device, size, &p);
  if (err == cudaErrorMemoryAllocation) {
    releaseCached(*pool, [](const Block&) { return false; });
    err = allocateDevice(pool->device, size, &p);
  }
  if (err != cudaSuccess) return err;
  Block& block = pool->blocks[poolAddress(p)];
  block.size = size;
  pool->reserved += size;
  pool->reserved_high = std::max(pool->reserved_high, pool->reserved);
  markUsed(*pool, block);
  *out = p;
  return cudaSuccess;
}

cudaError_t freeAsync(void* ptr, cudaStream_t stream) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  StreamAttributes s;
  if (cudaError_t err = streamAttributes(stream, &s); err != cudaSuccess) return err;
  Pools& ps = pools();
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(ps.mu);
    Located b = findBlock(ps, ptr);
    if (b.pool == nullptr) return freeDeviceMemoryAsync(ptr, stream);
    Block& block = b.block->second;
    if (block.state != BlockState::InUse) return cudaErrorInvalidValue;
    generation = ps.next_generation++;
    block.state = BlockState::FreePending;
    block.free_stream = s.id;
    block.free_generation = generation;
    b.pool->used -= block.size;
  }
  StreamOp op;
  op.work_class = WorkClass::Marker;
  op.kind = OpKind::HostFunc;
  op.name = "cudaFreeAsync";
  op.body = [ptr, generation](const OpContext&) {
    completeFree(ptr, generation);
    return OpTiming{};
  };
  const cudaError_t err = enqueue(stream, std::move(op));
  if (err != cudaSuccess) {  // the free never happens: the block is the program's again
    std::lock_guard lock(ps.mu);
    Located b = findBlock(ps, ptr);
    if (b.pool != nullptr && b.block->second.state == BlockState::FreePending &&
        b.block->second.free_generation == generation) {
      markUsed(*b.pool, b.block->second);
    }
  }
  return err;
}

namespace detail {

bool ownedByPool(const void* ptr) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mu);
  return findBlock(ps, ptr).pool != nullptr;
}

cudaError_t returnToPool(void* ptr) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mu);
  Located b = findBlock(ps, ptr);
  if (b.pool == nullptr || b.block->second.state != BlockState::InUse) return cudaErrorInvalidValue;
  b.pool->used -= b.block->second.size;
  if (!b.pool->alive) {
    release(*b.pool, b.block);
    forgetIfDone(ps, b.pool);
    return cudaSuccess;
  }
  b.block->second.state = BlockState::Cached;
  b.block->second.synchronized = true;  // cudaFree waited for the device
  return cudaSuccess;
}

void resetPools(int device) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mu);
  if (ps.defaults.empty()) return;
  for (const auto& p : ps.all) {
    if (p->device != device) continue;
    p->blocks.clear();  // their memory goes with the device's
    p->reserved = p->used = 0;
    p->alive = p->alive && p->is_default;
  }
  std::erase_if(ps.all, [](const auto& p) { return !p->alive; });
  ps.current[static_cast<std::size_t>(device)] = ps.defaults[static_cast<std::size_t>(device)];
}

}  // namespace detail
}  // namespace simgpu
