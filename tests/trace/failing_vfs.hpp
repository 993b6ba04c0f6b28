// A full disk on demand: a SQLite VFS that forwards everything to the default one but fails
// writes with SQLITE_FULL (what SQLite's own unix VFS returns on ENOSPC) once a byte budget
// is spent. SQLite's test harness simulates full disks the same way.
#pragma once

#include <cstdint>

namespace syncopate::trace::testing {

class FullDiskVfs {
 public:
  // Becomes the process's default VFS until destroyed; the budget starts unlimited.
  FullDiskVfs();
  ~FullDiskVfs();
  FullDiskVfs(const FullDiskVfs&) = delete;
  FullDiskVfs& operator=(const FullDiskVfs&) = delete;

  // Bytes that may still be written; negative for no limit.
  void setBudget(std::int64_t bytes);
  // How many writes were refused so far.
  std::uint64_t refusedWrites() const;
};

}  // namespace syncopate::trace::testing
