// The command's memory is advised as transparent huge pages.
//
// Where the kernel makes huge pages only for memory that asks (the usual `madvise` setting of
// /sys/kernel/mm/transparent_hugepage/enabled), memory is faulted in 4 KiB at a time, and on a
// virtual machine each fault is dear: `syncopate import kineto` of a 54 MB trace took 18 700
// page faults, and the kernel's fault handling was 45% of its time (simdjson's index of the
// text alone spans four bytes per byte of it); `syncopate analyze` of the imported run, 6 000,
// most of its time. So, in this executable only:
//   - every `new` of 8 MiB or more (the importers' parsers, the analyzer's columns) gets
//     MADV_HUGEPAGE on the whole 2 MiB pages it covers;
//   - glibc keeps one heap for every thread (M_ARENA_MAX: a thread's own arena is a mapping
//     the advice below would not reach; threads keep their caches of small blocks), and each
//     stretch the heap grows by is advised as huge pages (what glibc's `glibc.malloc.hugetlb=1`
//     tunable does, which only the environment can set), checked on every `new`: the heap's end
//     is a variable of glibc's, read without a system call;
//   - preferFewerPageFaults() (allocation_policy.hpp) has glibc serve every allocation under
//     64 MiB from that heap (M_MMAP_THRESHOLD), grow it 64 MiB at a time (M_TOP_PAD) and give
//     back only what passes 256 MiB at its top (M_TRIM_THRESHOLD): a buffer freed and allocated
//     again (a vector that doubles, a reader's rows store after store) reuses pages already
//     faulted in, where a mapping of its own was unmapped on free and faulted in anew.
// Only the command's own process: the collector and runtime, preloaded into a user's job, never
// replace its allocator or its settings. A sanitizer build keeps the sanitizer's allocator.
#include "allocation_policy.hpp"

#include <cstdlib>
#include <string_view>
#include <system_error>

#include "syncopate/trace/run_dir.hpp"

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
constexpr std::uintptr_t kPage = std::uintptr_t{4} << 10;
constexpr std::size_t kAdviseFrom = std::size_t{8} << 20;

// The heap's end up to which it has been advised.
std::atomic<std::uintptr_t> heap_advised{0};

void adviseHeapGrowth() noexcept {
  const auto end = reinterpret_cast<std::uintptr_t>(::sbrk(0)) & ~(kPage - 1);
  std::uintptr_t from = heap_advised.load(std::memory_order_relaxed);
  if (end <= from || !heap_advised.compare_exchange_strong(from, end, std::memory_order_relaxed)) return;
  // Advice only: a kernel without huge pages refuses it, and the memory works all the same.
  (void)::madvise(reinterpret_cast<void*>(from), end - from, MADV_HUGEPAGE);
}

// Before main: one arena, and the heap as it is then, small and not worth advising.
[[maybe_unused]] const bool heap_set_up = [] {
  (void)::mallopt(M_ARENA_MAX, 1);
  heap_advised.store((reinterpret_cast<std::uintptr_t>(::sbrk(0)) + kPage - 1) & ~(kPage - 1));
  return true;
}();

void* allocate(std::size_t bytes) noexcept {
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  adviseHeapGrowth();
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

namespace syncopate::cli {

void preferFewerPageFaults() {
  if (keepFreedMemory() == KeepFreedMemory::Never) return;
  (void)::mallopt(M_MMAP_THRESHOLD, 64 << 20);
  (void)::mallopt(M_TOP_PAD, 64 << 20);
  (void)::mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace syncopate::cli

#else

namespace syncopate::cli {

void preferFewerPageFaults() {}

}  // namespace syncopate::cli

#endif

namespace syncopate::cli {

KeepFreedMemory keepFreedMemory() {
  const char* v = std::getenv("SYNCOPATE_KEEP_FREED_MEMORY");
  if (v == nullptr || *v == '\0') return KeepFreedMemory::BySize;
  return std::string_view(v) == "0" ? KeepFreedMemory::Never : KeepFreedMemory::Always;
}

void preferFewerPageFaultsForRun(const std::filesystem::path& run_dir) {
  if (keepFreedMemory() == KeepFreedMemory::Always) return preferFewerPageFaults();
  auto stores = trace::listStores(run_dir);
  if (!stores) return;  // the command says what is wrong with the directory
  std::uintmax_t bytes = 0;
  for (const trace::StoreFile& f : *stores) {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(f.path, ec);
    if (!ec) bytes += size;
  }
  if (bytes <= kSmallRunStoreBytes) preferFewerPageFaults();
}

}  // namespace syncopate::cli
