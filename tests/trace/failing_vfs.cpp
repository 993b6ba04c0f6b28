#include "failing_vfs.hpp"

#include <sqlite3.h>

#include <atomic>

namespace syncopate::trace::testing {

namespace {

sqlite3_vfs* g_real = nullptr;
sqlite3_vfs g_vfs{};
sqlite3_io_methods g_methods{};
std::atomic<std::int64_t> g_budget{-1};
std::atomic<std::uint64_t> g_refused{0};

struct ShimFile {
  sqlite3_file base;
  sqlite3_file* real;  // lives right after this struct, in the space szOsFile reserves
};

sqlite3_file* real(sqlite3_file* file) { return reinterpret_cast<ShimFile*>(file)->real; }

int shimClose(sqlite3_file* f) { return real(f)->pMethods->xClose(real(f)); }
int shimRead(sqlite3_file* f, void* buffer, int amount, sqlite3_int64 offset) {
  return real(f)->pMethods->xRead(real(f), buffer, amount, offset);
}
int shimWrite(sqlite3_file* f, const void* buffer, int amount, sqlite3_int64 offset) {
  for (std::int64_t budget = g_budget.load(); budget >= 0;) {
    if (amount > budget) {
      g_refused.fetch_add(1);
      return SQLITE_FULL;
    }
    if (g_budget.compare_exchange_weak(budget, budget - amount)) break;
  }
  return real(f)->pMethods->xWrite(real(f), buffer, amount, offset);
}
int shimTruncate(sqlite3_file* f, sqlite3_int64 size) { return real(f)->pMethods->xTruncate(real(f), size); }
int shimSync(sqlite3_file* f, int flags) { return real(f)->pMethods->xSync(real(f), flags); }
int shimFileSize(sqlite3_file* f, sqlite3_int64* size) { return real(f)->pMethods->xFileSize(real(f), size); }
int shimLock(sqlite3_file* f, int lock) { return real(f)->pMethods->xLock(real(f), lock); }
int shimUnlock(sqlite3_file* f, int lock) { return real(f)->pMethods->xUnlock(real(f), lock); }
int shimCheckReservedLock(sqlite3_file* f, int* out) { return real(f)->pMethods->xCheckReservedLock(real(f), out); }
int shimFileControl(sqlite3_file* f, int op, void* arg) { return real(f)->pMethods->xFileControl(real(f), op, arg); }
int shimSectorSize(sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); }
int shimDeviceCharacteristics(sqlite3_file* f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); }
int shimShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return real(f)->pMethods->xShmMap(real(f), region, size, extend, out);
}
int shimShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
}
void shimShmBarrier(sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); }
int shimShmUnmap(sqlite3_file* f, int remove) { return real(f)->pMethods->xShmUnmap(real(f), remove); }
int shimFetch(sqlite3_file* f, sqlite3_int64 offset, int amount, void** out) {
  return real(f)->pMethods->xFetch(real(f), offset, amount, out);
}
int shimUnfetch(sqlite3_file* f, sqlite3_int64 offset, void* p) { return real(f)->pMethods->xUnfetch(real(f), offset, p); }

int shimOpen(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  auto* shim = reinterpret_cast<ShimFile*>(file);
  shim->real = reinterpret_cast<sqlite3_file*>(shim + 1);
  const int rc = g_real->xOpen(g_real, name, shim->real, flags, out_flags);
  file->pMethods = (rc == SQLITE_OK && shim->real->pMethods != nullptr) ? &g_methods : nullptr;
  return rc;
}

}  // namespace

FullDiskVfs::FullDiskVfs() {
  g_real = sqlite3_vfs_find(nullptr);
  g_budget = -1;
  g_refused = 0;
  g_methods = sqlite3_io_methods{3,
                                 shimClose,
                                 shimRead,
                                 shimWrite,
                                 shimTruncate,
                                 shimSync,
                                 shimFileSize,
                                 shimLock,
                                 shimUnlock,
                                 shimCheckReservedLock,
                                 shimFileControl,
                                 shimSectorSize,
                                 shimDeviceCharacteristics,
                                 shimShmMap,
                                 shimShmLock,
                                 shimShmBarrier,
                                 shimShmUnmap,
                                 shimFetch,
                                 shimUnfetch};
  g_vfs = *g_real;  // every other method is the real VFS's, unchanged
  g_vfs.zName = "syncopate-full-disk";
  g_vfs.pNext = nullptr;
  g_vfs.szOsFile = static_cast<int>(sizeof(ShimFile)) + g_real->szOsFile;
  g_vfs.xOpen = shimOpen;
  sqlite3_vfs_register(&g_vfs, /*makeDflt=*/1);
}

FullDiskVfs::~FullDiskVfs() {
  sqlite3_vfs_unregister(&g_vfs);
  sqlite3_vfs_register(g_real, /*makeDflt=*/1);
}

void FullDiskVfs::setBudget(std::int64_t bytes) { g_budget = bytes; }

std::uint64_t FullDiskVfs::refusedWrites() const { return g_refused.load(); }

}  // namespace syncopate::trace::testing
