// Reading a trace file into memory, inflating it when it is gzip (by its magic bytes, not its
// name), with the padding simdjson needs after the text.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
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
  // `padding` zero bytes follow the text's `size` bytes; `capacity` is at least their sum.
  TextBuffer(BigBuffer data, std::size_t size, std::size_t capacity, std::size_t padding)
      : data_(std::move(data)), size_(size), capacity_(capacity), padding_(padding) {}
  std::string_view text() const { return {data_.get(), size_}; }
  const char* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }  // size + at least `padding` bytes

  // Where a gzip stream cut off while it was written stops (the file's size, in compressed
  // bytes): the text is then all it inflated to. nullopt for a whole stream and for plain text.
  std::optional<std::size_t> gzipCut() const { return gzip_cut_; }
  void setGzipCut(std::size_t compressed_bytes) { gzip_cut_ = compressed_bytes; }

  // Makes the text its first `keep` bytes followed by `closing`, with the same padding after
  // it: a text cut off mid-write, closed so that it parses. In place when there is room, else
  // in a new buffer; false when that cannot be allocated.
  bool endWith(std::size_t keep, std::string_view closing);

 private:
  BigBuffer data_;
  std::size_t size_ = 0, capacity_ = 0;
  std::size_t padding_ = 0;
  std::optional<std::size_t> gzip_cut_;
};

// The whole file, inflated if it is gzip (several members are concatenated, as gunzip does),
// followed by `padding` zero bytes. A gzip stream that stops before its end (a file cut off
// while it was written) gives what it inflated to, marked with gzipCut(). Errors name the
// file: missing, unreadable, damaged gzip.
trace::Result<TextBuffer> readTextFile(const std::filesystem::path& file, std::size_t padding);

}  // namespace syncopate::analyzer::import
