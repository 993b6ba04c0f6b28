#include "whole_pages_vfs.hpp"

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>

namespace syncopate::trace::detail {

namespace {

struct WholePagesFile {
  sqlite3_file base;               // what SQLite sees; first, as the VFS contract requires
  sqlite3_file* inner;             // the default VFS's file, in the same allocation after this
  std::uint32_t page_size;         // a main database's, from its header; 0 for other files
};
constexpr std::size_t kInnerOffset = (sizeof(WholePagesFile) + alignof(std::max_align_t) - 1) / alignof(std::max_align_t) *
                                     alignof(std::max_align_t);

sqlite3_file* inner(sqlite3_file* f) { return reinterpret_cast<WholePagesFile*>(f)->inner; }
const sqlite3_io_methods& methods(sqlite3_file* f) { return *inner(f)->pMethods; }

int fileSize(sqlite3_file* f, sqlite3_int64* size) {
  const int rc = methods(f).xFileSize(inner(f), size);
  const std::uint32_t page = reinterpret_cast<WholePagesFile*>(f)->page_size;
  if (rc == SQLITE_OK && page > 0) *size -= *size % page;
  return rc;
}

// Every other method is the default VFS's own.
const sqlite3_io_methods kMethods = {
    3,
    [](sqlite3_file* f) { return methods(f).xClose(inner(f)); },
    [](sqlite3_file* f, void* out, int n, sqlite3_int64 at) { return methods(f).xRead(inner(f), out, n, at); },
    [](sqlite3_file* f, const void* in, int n, sqlite3_int64 at) { return methods(f).xWrite(inner(f), in, n, at); },
    [](sqlite3_file* f, sqlite3_int64 size) { return methods(f).xTruncate(inner(f), size); },
    [](sqlite3_file* f, int flags) { return methods(f).xSync(inner(f), flags); },
    fileSize,
    [](sqlite3_file* f, int lock) { return methods(f).xLock(inner(f), lock); },
    [](sqlite3_file* f, int lock) { return methods(f).xUnlock(inner(f), lock); },
    [](sqlite3_file* f, int* out) { return methods(f).xCheckReservedLock(inner(f), out); },
    [](sqlite3_file* f, int op, void* arg) { return methods(f).xFileControl(inner(f), op, arg); },
    [](sqlite3_file* f) { return methods(f).xSectorSize(inner(f)); },
    [](sqlite3_file* f) { return methods(f).xDeviceCharacteristics(inner(f)); },
    [](sqlite3_file* f, int page, int size, int extend, void volatile** out) {
      return methods(f).iVersion >= 2 ? methods(f).xShmMap(inner(f), page, size, extend, out) : SQLITE_IOERR;
    },
    [](sqlite3_file* f, int at, int n, int flags) {
      return methods(f).iVersion >= 2 ? methods(f).xShmLock(inner(f), at, n, flags) : SQLITE_IOERR;
    },
    [](sqlite3_file* f) {
      if (methods(f).iVersion >= 2) methods(f).xShmBarrier(inner(f));
    },
    [](sqlite3_file* f, int remove) { return methods(f).iVersion >= 2 ? methods(f).xShmUnmap(inner(f), remove) : SQLITE_OK; },
    [](sqlite3_file* f, sqlite3_int64 at, int n, void** out) {
      if (methods(f).iVersion >= 3) return methods(f).xFetch(inner(f), at, n, out);
      *out = nullptr;  // not mapped: SQLite reads instead
      return SQLITE_OK;
    },
    [](sqlite3_file* f, sqlite3_int64 at, void* p) {
      return methods(f).iVersion >= 3 ? methods(f).xUnfetch(inner(f), at, p) : SQLITE_OK;
    },
};

sqlite3_vfs* real(sqlite3_vfs* vfs) { return static_cast<sqlite3_vfs*>(vfs->pAppData); }

int openFile(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  auto* f = reinterpret_cast<WholePagesFile*>(file);
  f->inner = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + kInnerOffset);
  f->page_size = 0;
  const int rc = real(vfs)->xOpen(real(vfs), name, f->inner, flags, out_flags);
  // SQLite closes the file through pMethods whenever it is set, even after a failed open.
  f->base.pMethods = f->inner->pMethods != nullptr ? &kMethods : nullptr;
  if (rc != SQLITE_OK || (flags & SQLITE_OPEN_MAIN_DB) == 0) return rc;
  unsigned char header[2] = {};  // the page size, big-endian at offset 16; 1 means 65536
  if (f->inner->pMethods->xRead(f->inner, header, 2, 16) == SQLITE_OK) {
    const std::uint32_t page = header[0] == 0 && header[1] == 1 ? 65536u : (std::uint32_t{header[0]} << 8 | header[1]);
    if (page >= 512 && (page & (page - 1)) == 0) f->page_size = page;
  }
  return rc;
}

sqlite3_vfs makeVfs(sqlite3_vfs* base) {
  sqlite3_vfs v{};
  v.iVersion = base->iVersion >= 2 ? 2 : 1;
  v.szOsFile = static_cast<int>(kInnerOffset) + base->szOsFile;
  v.mxPathname = base->mxPathname;
  v.zName = "syncopate-whole-pages";
  v.pAppData = base;
  v.xOpen = openFile;
  v.xDelete = [](sqlite3_vfs* s, const char* name, int sync) { return real(s)->xDelete(real(s), name, sync); };
  v.xAccess = [](sqlite3_vfs* s, const char* name, int flags, int* out) { return real(s)->xAccess(real(s), name, flags, out); };
  v.xFullPathname = [](sqlite3_vfs* s, const char* name, int n, char* out) {
    return real(s)->xFullPathname(real(s), name, n, out);
  };
  v.xDlOpen = [](sqlite3_vfs* s, const char* name) { return real(s)->xDlOpen(real(s), name); };
  v.xDlError = [](sqlite3_vfs* s, int n, char* out) { real(s)->xDlError(real(s), n, out); };
  v.xDlSym = [](sqlite3_vfs* s, void* lib, const char* symbol) { return real(s)->xDlSym(real(s), lib, symbol); };
  v.xDlClose = [](sqlite3_vfs* s, void* lib) { real(s)->xDlClose(real(s), lib); };
  v.xRandomness = [](sqlite3_vfs* s, int n, char* out) { return real(s)->xRandomness(real(s), n, out); };
  v.xSleep = [](sqlite3_vfs* s, int us) { return real(s)->xSleep(real(s), us); };
  v.xCurrentTime = [](sqlite3_vfs* s, double* out) { return real(s)->xCurrentTime(real(s), out); };
  v.xGetLastError = [](sqlite3_vfs* s, int n, char* out) { return real(s)->xGetLastError(real(s), n, out); };
  if (base->iVersion >= 2)
    v.xCurrentTimeInt64 = [](sqlite3_vfs* s, sqlite3_int64* out) { return real(s)->xCurrentTimeInt64(real(s), out); };
  return v;
}

}  // namespace

const char* wholePagesVfs() noexcept {
  static sqlite3_vfs* const registered = []() -> sqlite3_vfs* {
    if (sqlite3_initialize() != SQLITE_OK) return nullptr;
    sqlite3_vfs* base = sqlite3_vfs_find(nullptr);
    if (base == nullptr) return nullptr;
    static sqlite3_vfs vfs = makeVfs(base);
    return sqlite3_vfs_register(&vfs, 0) == SQLITE_OK ? &vfs : nullptr;
  }();
  return registered != nullptr ? registered->zName : nullptr;
}

}  // namespace syncopate::trace::detail
