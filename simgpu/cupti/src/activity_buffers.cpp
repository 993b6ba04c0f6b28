#include "activity_buffers.hpp"

#include <cstring>

namespace simgpu::cupti {

std::size_t recordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    default: return 0;
  }
}

namespace {

constexpr std::size_t aligned(std::size_t size) { return (size + 7) & ~std::size_t{7}; }

}  // namespace

void ActivityBuffers::setCallbacks(CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed) {
  std::lock_guard lock(mutex_);
  requested_ = requested;
  completed_ = completed;
}

bool ActivityBuffers::registered() const {
  std::lock_guard lock(mutex_);
  return requested_ != nullptr && completed_ != nullptr;
}

bool ActivityBuffers::append(const void* record, std::size_t size) {
  std::lock_guard lock(mutex_);
  if (current_.data != nullptr && current_.used + aligned(size) > current_.size) {
    full_.push_back(current_);
    current_ = Buffer{};
  }
  if (current_.data == nullptr && requested_ != nullptr) {
    std::size_t max_records = 0;
    requested_(&current_.data, &current_.size, &max_records);
    if (current_.data == nullptr || current_.size < aligned(size)) current_ = Buffer{};
  }
  if (current_.data == nullptr) {
    ++dropped_;
    return false;
  }
  std::memcpy(current_.data + current_.used, record, size);
  current_.used += aligned(size);
  return true;
}

void ActivityBuffers::deliver(bool all) {
  std::vector<Buffer> ready;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  {
    std::lock_guard lock(mutex_);
    completed = completed_;
    ready.swap(full_);
    if (all && current_.data != nullptr && current_.used > 0) {
      ready.push_back(current_);
      current_ = Buffer{};
    }
  }
  if (completed == nullptr) return;
  for (const Buffer& buffer : ready) completed(nullptr, 0, buffer.data, buffer.size, buffer.used);
}

std::size_t ActivityBuffers::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

}  // namespace simgpu::cupti
