// Helpers for tests of libnccl.so.2 itself: devices, memory and streams come straight from
// simgpu's core (device memory is host memory there, so tests fill and read it directly).
#pragma once

#include "simgpu/core/memory.hpp"
#include "simgpu/core/runtime.hpp"
#include "simgpu/core/streams.hpp"

#include <nccl.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace simgpu::nccl::testing {

// Every test program of libnccl.so.2 runs on the profile of this folder (4 devices per
// process, 2 ranks per emulated host), set before simgpu starts.
inline void useTestProfile() { setenv("SIMGPU_PROFILE", SIMGPU_NCCL_TEST_PROFILE, 1); }

inline void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + " failed with CUDA error " + std::to_string(err));
}

// Device memory of `bytes` on `device`, freed with the object.
class DeviceBuffer {
 public:
  DeviceBuffer(int device, std::size_t bytes) : bytes_(bytes) {
    check(simgpu::allocateDevice(device, bytes, &ptr_), "allocateDevice");
    if (ptr_ != nullptr) std::memset(ptr_, 0, bytes);
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) simgpu::freeDevice(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }

  void* get() const { return ptr_; }
  char* bytes() const { return static_cast<char*>(ptr_); }
  std::size_t size() const { return bytes_; }
  std::vector<char> contents() const { return std::vector<char>(bytes(), bytes() + bytes_); }
  void fill(const std::vector<char>& data) { std::memcpy(ptr_, data.data(), std::min(data.size(), bytes_)); }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

inline cudaStream_t makeStream(int device) {
  cudaStream_t s = nullptr;
  check(simgpu::createStream(device, cudaStreamNonBlocking, 0, &s), "createStream");
  return s;
}

inline void sync(cudaStream_t s) { check(simgpu::synchronizeStream(s), "synchronizeStream"); }

}  // namespace simgpu::nccl::testing
