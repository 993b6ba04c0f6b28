#include "device_allocator.hpp"

#include "sample_common/cuda_check.hpp"

namespace framework_trainer {

DeviceAllocator::DeviceAllocator(std::size_t segment_bytes)
    : cache_(
          [](std::size_t bytes) -> void* {
            void* segment = nullptr;
            if (cudaMalloc(&segment, bytes) != cudaSuccess) {
              cudaGetLastError();  // the caller reports the failure; do not leave it for the next call
              return nullptr;
            }
            return segment;
          },
          [](void* segment) { cudaFree(segment); }, segment_bytes) {}

DeviceAllocator::~DeviceAllocator() {
  for (cudaEvent_t event : events_) cudaEventDestroy(event);
}

void DeviceAllocator::releaseAfterWorkOn(void* block, cudaStream_t user) {
  cudaEvent_t event = nullptr;
  {
    const std::lock_guard lock(events_mutex_);
    if (spare_events_.empty()) {
      SAMPLE_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
      events_.push_back(event);
    } else {
      event = spare_events_.back();
      spare_events_.pop_back();
    }
  }
  SAMPLE_CUDA(cudaEventRecord(event, user));
  cache_.releaseWhen(block, [this, event] {
    const cudaError_t state = cudaEventQuery(event);
    if (state == cudaErrorNotReady) {
      cudaGetLastError();  // not an error: do not leave it for the next call to report
      return false;
    }
    SAMPLE_CUDA(state);
    const std::lock_guard lock(events_mutex_);
    spare_events_.push_back(event);
    return true;
  });
}

void* DeviceAllocator::allocate(std::size_t bytes, cudaStream_t stream) {
  return cache_.allocate(bytes, reinterpret_cast<CachingAllocator::StreamKey>(stream));
}

}  // namespace framework_trainer
