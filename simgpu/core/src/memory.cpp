// The registry of simulated allocations: device, managed, pinned and registered host memory.
// Large blocks come from mmap (zero pages that cost nothing until touched, so a program may
// allocate what its profile's device holds); small ones from aligned_alloc with CUDA's 256-byte
// alignment. Blocks of memory pools are device allocations here; their pools decide when.
#include "memory_registry.hpp"
#include "pool_registry.hpp"

#include <simgpu/core/memory.hpp>
#include <simgpu/core/runtime.hpp>

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace simgpu {
namespace {

constexpr std::size_t kAlignment = 256;
constexpr std::size_t kMmapThreshold = 64 * 1024;

struct Allocation {
  PointerInfo info;
  bool mapped = false;  // came from mmap (else aligned_alloc, or the program's for Registered)
};

struct Registry {
  std::shared_mutex mu;
  std::map<std::uintptr_t, Allocation> by_base;
  std::vector<std::size_t> device_bytes;
};

Registry& registry() {
  static Registry* const r = new Registry();  // outlives static destructors that free memory
  return *r;
}

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

void* allocateBlock(std::size_t size, bool& mapped) {
  if (size >= kMmapThreshold) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    mapped = true;
    return p == MAP_FAILED ? nullptr : p;
  }
  mapped = false;
  return std::aligned_alloc(kAlignment, (size + kAlignment - 1) / kAlignment * kAlignment);
}

void releaseBlock(const Allocation& a) {
  if (a.info.kind == MemoryKind::Registered) return;
  if (a.mapped)
    munmap(a.info.base, a.info.size);
  else
    std::free(a.info.base);
}

// The allocation containing p, or nullptr. Caller holds the registry's lock.
const Allocation* find(Registry& r, const void* p) {
  auto it = r.by_base.upper_bound(address(p));
  if (it == r.by_base.begin()) return nullptr;
  --it;
  const Allocation& a = it->second;
  const std::uintptr_t base = address(a.info.base);
  return address(p) < base + std::max<std::size_t>(a.info.size, 1) ? &a : nullptr;
}

bool overlaps(Registry& r, const void* p, std::size_t size) {
  if (find(r, p) != nullptr) return true;
  auto it = r.by_base.lower_bound(address(p));
  return it != r.by_base.end() && it->first < address(p) + size;
}

}  // namespace

cudaError_t allocateDevice(int device, std::size_t size, void** out) {
  *out = nullptr;
  if (size == 0) return cudaSuccess;
  Registry& r = registry();
  const std::size_t total = profile().device.memory_bytes;
  {
    std::unique_lock lock(r.mu);
    if (r.device_bytes.size() <= static_cast<std::size_t>(device))
      r.device_bytes.resize(static_cast<std::size_t>(device) + 1, 0);
    std::size_t& used = r.device_bytes[static_cast<std::size_t>(device)];
    if (size > total - used) return cudaErrorMemoryAllocation;
    used += size;  // reserved now, so that concurrent allocations cannot both fit
  }
  Allocation a;
  void* p = allocateBlock(size, a.mapped);
  std::unique_lock lock(r.mu);
  if (p == nullptr) {
    r.device_bytes[static_cast<std::size_t>(device)] -= size;
    return cudaErrorMemoryAllocation;
  }
  a.info = PointerInfo{MemoryKind::Device, device, p, size, 0};
  r.by_base.emplace(address(p), a);
  *out = p;
  return cudaSuccess;
}

namespace {

// Unregisters and frees the allocation based at `ptr` if it is of `kind`.
cudaError_t releaseNow(void* ptr, MemoryKind kind) {
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  auto it = r.by_base.find(address(ptr));
  if (it == r.by_base.end() || it->second.info.kind != kind) return cudaErrorInvalidValue;
  releaseBlock(it->second);
  if (kind == MemoryKind::Device)
    r.device_bytes[static_cast<std::size_t>(it->second.info.device)] -= it->second.info.size;
  r.by_base.erase(it);
  return cudaSuccess;
}

// A new block of memory that does not count against a device's memory (pinned, managed).
cudaError_t allocateUncounted(MemoryKind kind, int device, std::size_t size, unsigned flags, void** out) {
  Allocation a;
  void* p = allocateBlock(size, a.mapped);
  if (p == nullptr) return cudaErrorMemoryAllocation;
  a.info = PointerInfo{kind, device, p, size, flags};
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  r.by_base.emplace(address(p), a);
  *out = p;
  return cudaSuccess;
}

}  // namespace

cudaError_t releaseDeviceNow(void* ptr) { return releaseNow(ptr, MemoryKind::Device); }

cudaError_t allocateManaged(int device, std::size_t size, unsigned flags, void** out) {
  *out = nullptr;
  if (size == 0) return cudaErrorInvalidValue;
  return allocateUncounted(MemoryKind::Managed, device, size, flags, out);
}

cudaError_t freeDevice(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  const PointerInfo info = lookupPointer(ptr);
  if (info.base != ptr) return cudaErrorInvalidValue;
  if (info.kind == MemoryKind::Managed) {
    // Any device may have work pending on managed memory.
    cudaError_t sync = cudaSuccess;
    for (int d = 0; d < deviceCount(); ++d)
      if (cudaError_t err = synchronizeDevice(d); err != cudaSuccess) sync = err;
    const cudaError_t freed = releaseNow(ptr, MemoryKind::Managed);  // invalid if freed concurrently
    return freed != cudaSuccess ? freed : sync;
  }
  if (info.kind != MemoryKind::Device) return cudaErrorInvalidValue;
  const cudaError_t sync = synchronizeDevice(info.device);
  const cudaError_t freed = detail::ownedByPool(ptr) ? detail::returnToPool(ptr) : releaseDeviceNow(ptr);
  return freed != cudaSuccess ? freed : sync;
}

cudaError_t allocateHost(int device, std::size_t size, unsigned flags, void** out) {
  *out = nullptr;
  if (size == 0) return cudaSuccess;
  return allocateUncounted(MemoryKind::PinnedHost, device, size, flags, out);
}

cudaError_t freeHost(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  Registry& r = registry();
  {
    std::shared_lock lock(r.mu);
    auto it = r.by_base.find(address(ptr));
    if (it == r.by_base.end() || it->second.info.kind != MemoryKind::PinnedHost) return cudaErrorInvalidValue;
  }
  // Pinned memory may be in use by pending copies on any device.
  for (int d = 0; d < deviceCount(); ++d) synchronizeDevice(d);
  std::unique_lock lock(r.mu);
  auto it = r.by_base.find(address(ptr));
  if (it == r.by_base.end()) return cudaErrorInvalidValue;
  releaseBlock(it->second);
  r.by_base.erase(it);
  return cudaSuccess;
}

cudaError_t registerHost(int device, void* ptr, std::size_t size, unsigned flags) {
  if (ptr == nullptr || size == 0) return cudaErrorInvalidValue;
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  if (overlaps(r, ptr, size)) return cudaErrorHostMemoryAlreadyRegistered;
  Allocation a;
  a.info = PointerInfo{MemoryKind::Registered, device, ptr, size, flags};
  r.by_base.emplace(address(ptr), a);
  return cudaSuccess;
}

cudaError_t unregisterHost(void* ptr) {
  Registry& r = registry();
  {
    std::shared_lock lock(r.mu);
    auto it = r.by_base.find(address(ptr));
    if (it == r.by_base.end() || it->second.info.kind != MemoryKind::Registered)
      return cudaErrorHostMemoryNotRegistered;
  }
  for (int d = 0; d < deviceCount(); ++d) synchronizeDevice(d);
  std::unique_lock lock(r.mu);
  r.by_base.erase(address(ptr));
  return cudaSuccess;
}

PointerInfo lookupPointer(const void* ptr) {
  Registry& r = registry();
  std::shared_lock lock(r.mu);
  const Allocation* a = find(r, ptr);
  return a == nullptr ? PointerInfo{} : a->info;
}

std::size_t deviceBytesInUse(int device) {
  Registry& r = registry();
  std::shared_lock lock(r.mu);
  return static_cast<std::size_t>(device) < r.device_bytes.size()
             ? r.device_bytes[static_cast<std::size_t>(device)]
             : 0;
}

namespace detail {

void freeDeviceAllocations(int device) {
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  std::erase_if(r.by_base, [&](const auto& item) {
    const Allocation& a = item.second;
    const bool on_device = a.info.kind == MemoryKind::Device || a.info.kind == MemoryKind::Managed;
    if (!on_device || a.info.device != device) return false;
    releaseBlock(a);
    return true;
  });
  if (static_cast<std::size_t>(device) < r.device_bytes.size())
    r.device_bytes[static_cast<std::size_t>(device)] = 0;
}

}  // namespace detail
}  // namespace simgpu
