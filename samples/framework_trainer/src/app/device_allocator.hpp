// The caching allocator (framework_trainer/caching_allocator.hpp) over cudaMalloc, and device
// tensors that are blocks of it: what PyTorch's CUDACachingAllocator and at::Tensor are to a
// training job. A tensor is used on the stream it was allocated for and goes back to that
// stream's free list when it is destroyed.
#pragma once

#include "framework_trainer/caching_allocator.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>

namespace framework_trainer {

class DeviceAllocator {
 public:
  explicit DeviceAllocator(std::size_t segment_bytes);
  void* allocate(std::size_t bytes, cudaStream_t stream);
  void release(void* block) { cache_.release(block); }
  CachingAllocator::Stats stats() const { return cache_.stats(); }

 private:
  CachingAllocator cache_;
};

template <class T>
class DeviceTensor {
 public:
  DeviceTensor() = default;
  DeviceTensor(DeviceAllocator& allocator, std::int64_t numel, cudaStream_t stream)
      : owner_(&allocator),
        data_(static_cast<T*>(allocator.allocate(static_cast<std::size_t>(numel) * sizeof(T), stream))),
        numel_(numel) {}
  DeviceTensor(DeviceTensor&& other) noexcept { swap(other); }
  DeviceTensor& operator=(DeviceTensor&& other) noexcept {
    DeviceTensor(std::move(other)).swap(*this);
    return *this;
  }
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;
  ~DeviceTensor() {
    if (data_ != nullptr) owner_->release(data_);
  }

  T* get() const { return data_; }
  std::int64_t numel() const { return numel_; }
  std::size_t bytes() const { return static_cast<std::size_t>(numel_) * sizeof(T); }

 private:
  void swap(DeviceTensor& other) noexcept {
    std::swap(owner_, other.owner_);
    std::swap(data_, other.data_);
    std::swap(numel_, other.numel_);
  }
  DeviceAllocator* owner_ = nullptr;
  T* data_ = nullptr;
  std::int64_t numel_ = 0;
};

}  // namespace framework_trainer
