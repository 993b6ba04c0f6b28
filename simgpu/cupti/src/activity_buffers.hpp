// The client's activity buffers, as CUPTI manages them: requested from the client when a record
// needs room, filled with records one after another (8-byte aligned, each record's size given
// by its kind), handed back through the client's completion callback when full or flushed.
// Appending never calls the client's completion callback (it may run under simgpu's lock);
// full buffers wait until deliver() runs on a thread where calling the client is safe.
#pragma once

#include <cupti_activity.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace simgpu::cupti {

// The size of a record of `kind` in this library's buffers; 0 for kinds it never writes.
std::size_t recordSize(CUpti_ActivityKind kind);

class ActivityBuffers {
 public:
  void setCallbacks(CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed);
  bool registered() const;

  // Copies `size` bytes of `record`; false (and counted as dropped) when the client gave no
  // buffer or one too small for a single record.
  bool append(const void* record, std::size_t size);

  // Hands full buffers to the client; with `all`, the partly filled one too (a flush).
  void deliver(bool all);

  std::size_t dropped() const;

 private:
  struct Buffer {
    std::uint8_t* data = nullptr;
    std::size_t size = 0;
    std::size_t used = 0;
  };

  mutable std::mutex mutex_;
  CUpti_BuffersCallbackRequestFunc requested_ = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed_ = nullptr;
  Buffer current_;
  std::vector<Buffer> full_;
  std::size_t dropped_ = 0;
};

}  // namespace simgpu::cupti
