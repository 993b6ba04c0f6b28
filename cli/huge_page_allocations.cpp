// The command's large allocations are advised as transparent huge pages.
//
// Where the kernel makes huge pages only for memory that asks (the usual `madvise` setting of
// /sys/kernel/mm/transparent_hugepage/enabled), a large buffer is faulted in 4 KiB at a time:
// `syncopate import kineto` of a 54 MB trace took 18 700 page faults, and the kernel's fault
// handling was 45% of its time (simdjson's index of the text alone spans four bytes per byte
// of it). So every `new` of 8 MiB or more from this executable (the importers' parsers, the
// analyzer's columns) gets MADV_HUGEPAGE on the whole 2 MiB pages it covers; glibc serves such
// sizes with a mapping of their own, so the advice ends with the allocation. Only the command's
// own process: the collector and runtime, preloaded into a user's job, never replace its
// allocator. A sanitizer build keeps the sanitizer's allocator.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
constexpr std::size_t kAdviseFrom = std::size_t{8} << 20;

void* allocate(std::size_t bytes) noexcept {
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  if (p == nullptr || bytes < kAdviseFrom) return p;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t begin = (at + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t end = (at + bytes) & ~(kHugePage - 1);
  // Advice only: a kernel without huge pages refuses it, and the memory works all the same.
  if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  return p;
}

void* allocateOrThrow(std::size_t bytes) {
  void* p = allocate(bytes);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t bytes) { return allocateOrThrow(bytes); }
void* operator new[](std::size_t bytes) { return allocateOrThrow(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept { return allocate(bytes); }
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept { return allocate(bytes); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

#endif
