#include "device_allocator.hpp"

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

void* DeviceAllocator::allocate(std::size_t bytes, cudaStream_t stream) {
  return cache_.allocate(bytes, reinterpret_cast<CachingAllocator::StreamKey>(stream));
}

}  // namespace framework_trainer
