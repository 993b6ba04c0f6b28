// The caching allocator (framework_trainer/caching_allocator.hpp) over cudaMalloc, and device
// tensors that are blocks of it: what PyTorch's CUDACachingAllocator and at::Tensor are to a
// training job. A tensor is used on the stream it was allocated for and goes back to that
// stream's free list when it is destroyed.
#pragma once

#include "framework_trainer/caching_allocator.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace framework_trainer {

class DeviceAllocator {
 public:
  explicit DeviceAllocator(std::size_t segment_bytes);
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;
  ~DeviceAllocator();
  void* allocate(std::size_t bytes, cudaStream_t stream);
  void release(void* block) { cache_.release(block); }
  // Gives `block` back once the work queued on `user` so far has run (an event recorded there,
  // queried at later allocations): PyTorch's tensor.record_stream(user) before the tensor is
  // freed, for a block allocated on one stream and read on another.
  void releaseAfterWorkOn(void* block, cudaStream_t user);
  CachingAllocator::Stats stats() const { return cache_.stats(); }

 private:
  CachingAllocator cache_;
  std::mutex events_mutex_;  // the forward thread frees, the backward thread too
  std::vector<cudaEvent_t> events_, spare_events_;  // every event made; those free to record
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
  // Frees the tensor once the work queued on `user` so far has run (DeviceAllocator::releaseAfterWorkOn).
  void releaseAfterWorkOn(cudaStream_t user) {
    if (data_ != nullptr) owner_->releaseAfterWorkOn(std::exchange(data_, nullptr), user);
    numel_ = 0;
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
