// Reading a trace file into memory, inflating it when it is gzip (by its magic bytes, not its
// name), with the padding simdjson needs after the text.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string_view>

#include "syncopate/trace/status.hpp"

namespace syncopate::analyzer::import {

// Memory for large texts: 2 MiB aligned and advised as huge pages, because faulting in tens of
// megabytes 4 KiB at a time costs as much as inflating them.
struct FreeDeleter {
  void operator()(char* p) const noexcept;
};
using BigBuffer = std::unique_ptr<char[], FreeDeleter>;
BigBuffer allocateBig(std::size_t bytes);

class TextBuffer {
 public:
  TextBuffer() = default;
  TextBuffer(BigBuffer data, std::size_t size, std::size_t capacity)
      : data_(std::move(data)), size_(size), capacity_(capacity) {}
  std::string_view text() const { return {data_.get(), size_}; }
  const char* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }  // size + at least `padding` bytes

 private:
  BigBuffer data_;
  std::size_t size_ = 0, capacity_ = 0;
};

// The whole file, inflated if it is gzip (several members are concatenated, as gunzip does),
// followed by `padding` zero bytes. Errors name the file: missing, unreadable, truncated or
// damaged gzip.
trace::Result<TextBuffer> readTextFile(const std::filesystem::path& file, std::size_t padding);

}  // namespace syncopate::analyzer::import
