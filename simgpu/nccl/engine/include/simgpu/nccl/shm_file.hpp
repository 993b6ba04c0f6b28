// A mapped POSIX shared memory object (shm_open + mmap), owned by one object.
#pragma once

#include "simgpu/nccl/status.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace simgpu::nccl {

class ShmFile {
 public:
  ShmFile() = default;
  ShmFile(ShmFile&& other) noexcept;
  ShmFile& operator=(ShmFile&& other) noexcept;
  ShmFile(const ShmFile&) = delete;
  ShmFile& operator=(const ShmFile&) = delete;
  ~ShmFile();

  // Creates the object with `size` bytes, or opens it when another rank created it first
  // (then waits, until deadline_ns on CLOCK_MONOTONIC, for the creator to size it). A new
  // object's memory is reserved up front so that a full /dev/shm is a clear error now
  // instead of a SIGBUS later. A new object reads as zeros; created() tells which happened.
  static Status createOrOpen(const std::string& name, std::size_t size, std::int64_t deadline_ns,
                             ShmFile* out);
  // Maps an existing object at its current size (used to inspect leftovers).
  static Status openExisting(const std::string& name, ShmFile* out);
  static void unlink(const std::string& name);

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool created() const { return created_; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
  bool created_ = false;
};

}  // namespace simgpu::nccl
