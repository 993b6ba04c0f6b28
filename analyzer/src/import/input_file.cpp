#include "input_file.hpp"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace syncopate::analyzer::import {

void FreeDeleter::operator()(char* p) const noexcept { std::free(p); }

BigBuffer allocateBig(std::size_t bytes) {
  constexpr std::size_t kHuge = 2 * 1024 * 1024;
  const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
  char* p = static_cast<char*>(std::aligned_alloc(kHuge, std::max(rounded, kHuge)));
  if (p) ::madvise(p, std::max(rounded, kHuge), MADV_HUGEPAGE);  // advice only: failure is harmless
  return BigBuffer(p);
}

bool TextBuffer::endWith(std::size_t keep, std::string_view closing) {
  const std::size_t size = std::min(keep, size_) + closing.size();
  if (size + padding_ > capacity_) {
    BigBuffer bigger = allocateBig(size + padding_);
    if (!bigger) return false;
    std::memcpy(bigger.get(), data_.get(), std::min(keep, size_));
    data_ = std::move(bigger);
    capacity_ = size + padding_;
  }
  std::memcpy(data_.get() + size - closing.size(), closing.data(), closing.size());
  std::memset(data_.get() + size, 0, padding_);
  size_ = size;
  return true;
}

namespace {

trace::Result<std::vector<unsigned char>> readAll(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return trace::failure("cannot read " + file.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    ::close(fd);
    return trace::failure(file.string() + " is not a regular file");
  }
  std::vector<unsigned char> bytes(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      return trace::failure("cannot read " + file.string() + ": " + (n == 0 ? "file shrank while reading" : std::strerror(err)));
    }
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return bytes;
}

bool isGzip(const std::vector<unsigned char>& b) { return b.size() >= 2 && b[0] == 0x1f && b[1] == 0x8b; }

// Deflate inflates at most 1032 times (a run of one byte); no stream says more.
constexpr std::size_t kMaxDeflateRatio = 1032;

// The size the last member says it inflates to (ISIZE, modulo 2^32): a first guess only, and
// any four bytes in a file cut off before its trailer, hence the bound.
std::size_t sizeHint(const std::vector<unsigned char>& b) {
  if (b.size() < 18) return 0;
  const unsigned char* p = b.data() + b.size() - 4;
  const std::size_t isize = static_cast<std::size_t>(p[0]) | (static_cast<std::size_t>(p[1]) << 8) |
                            (static_cast<std::size_t>(p[2]) << 16) | (static_cast<std::size_t>(p[3]) << 24);
  return std::min(isize, b.size() * kMaxDeflateRatio);
}

// The inflated text so far, growing by doubling; `padding` bytes stay free after it.
struct Inflating {
  BigBuffer out;
  std::size_t capacity = 0, size = 0, padding = 0;

  std::size_t room() const { return capacity - padding - size; }
  bool grow() {
    const std::size_t bigger = 2 * capacity;
    BigBuffer grown = allocateBig(bigger);
    if (!grown) return false;
    std::memcpy(grown.get(), out.get(), size);
    out = std::move(grown);
    capacity = bigger;
    return true;
  }
};

enum class StreamEnd { Whole, Cut, Damaged, OutOfMemory };

// Inflates the gzip members of in[from, end) with zlib, whose streaming inflate tells a stream
// that stops early (a file cut off while it was written) from damaged data: libdeflate, which
// inflates whole buffers, reports both alike. Only the members from the first one libdeflate
// refused go this slower way. `at` ends where the input was read to (for damage: near it).
StreamEnd inflateStreaming(const std::vector<unsigned char>& in, std::size_t from, Inflating& text, std::size_t& at) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return StreamEnd::OutOfMemory;  // 16: gzip framing
  constexpr std::size_t kChunk = std::size_t{1} << 30;                          // zlib counts in 32 bits
  at = from;
  StreamEnd end = StreamEnd::Cut;
  for (;;) {
    if (text.room() == 0 && !text.grow()) {
      end = StreamEnd::OutOfMemory;
      break;
    }
    const std::size_t in_len = std::min(in.size() - at, kChunk), out_len = std::min(text.room(), kChunk);
    z.next_in = const_cast<Bytef*>(in.data() + at);
    z.avail_in = static_cast<uInt>(in_len);
    z.next_out = reinterpret_cast<Bytef*>(text.out.get() + text.size);
    z.avail_out = static_cast<uInt>(out_len);
    const int r = ::inflate(&z, Z_NO_FLUSH);
    const std::size_t consumed = in_len - z.avail_in, produced = out_len - z.avail_out;
    at += consumed;
    text.size += produced;
    if (r == Z_STREAM_END) {
      if (at == in.size()) {
        end = StreamEnd::Whole;
        break;
      }
      ::inflateReset(&z);  // the next member
      continue;
    }
    if (r == Z_DATA_ERROR || r == Z_NEED_DICT || r == Z_STREAM_ERROR) {
      end = StreamEnd::Damaged;
      break;
    }
    if (r == Z_MEM_ERROR) {
      end = StreamEnd::OutOfMemory;
      break;
    }
    // Z_OK or Z_BUF_ERROR: inflate stopped for want of input or of room. Room left and no
    // input left: the stream wants bytes the file does not have. No progress with both left
    // cannot happen; should it, the loop ends rather than spin.
    if (z.avail_out > 0 && at == in.size()) break;
    if (z.avail_out > 0 && consumed == 0 && produced == 0) {
      end = StreamEnd::Damaged;
      break;
    }
  }
  ::inflateEnd(&z);
  return end;
}

}  // namespace

trace::Result<TextBuffer> readTextFile(const std::filesystem::path& file, std::size_t padding) {
  auto raw = readAll(file);
  if (!raw) return raw.status();
  std::vector<unsigned char>& in = *raw;
  if (!isGzip(in)) {
    BigBuffer buf = allocateBig(in.size() + padding);
    if (!buf) return trace::failure("out of memory reading " + file.string());
    if (!in.empty()) std::memcpy(buf.get(), in.data(), in.size());  // an empty vector's data() may be null
    std::memset(buf.get() + in.size(), 0, padding);
    return TextBuffer(std::move(buf), in.size(), in.size() + padding, padding);
  }
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  if (!d) return trace::failure("out of memory inflating " + file.string());
  Inflating text;
  text.padding = padding;
  // The hint first; when that much address space is not to be had (a hint read from a file
  // cut before its trailer can be gigabytes), a modest start that grows as needed.
  for (const std::size_t guess : {std::max<std::size_t>(sizeHint(in), in.size() * 4), in.size() * 4}) {
    text.capacity = guess + padding;
    text.out = allocateBig(text.capacity);
    if (text.out) break;
  }
  if (!text.out) {
    libdeflate_free_decompressor(d);
    return trace::failure("out of memory inflating " + file.string());
  }
  std::size_t in_pos = 0;
  bool out_of_memory = false, refused = false;
  while (in_pos < in.size()) {
    std::size_t in_used = 0, out_got = 0;
    const libdeflate_result r = libdeflate_gzip_decompress_ex(d, in.data() + in_pos, in.size() - in_pos, text.out.get() + text.size,
                                                              text.room(), &in_used, &out_got);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
      // Grow and retry this member (ISIZE is only the last member's size, modulo 4 GiB).
      if (!text.grow()) {
        out_of_memory = true;
        break;
      }
      continue;
    }
    if (r != LIBDEFLATE_SUCCESS) {
      refused = true;
      break;
    }
    in_pos += in_used;
    text.size += out_got;
  }
  libdeflate_free_decompressor(d);
  if (out_of_memory) return trace::failure("out of memory inflating " + file.string());
  std::optional<std::size_t> cut;
  if (refused) {
    std::size_t stopped_at = in_pos;
    switch (inflateStreaming(in, in_pos, text, stopped_at)) {
      case StreamEnd::Whole: break;
      case StreamEnd::Cut: cut = in.size(); break;
      case StreamEnd::Damaged:
        return trace::failure(file.string() + " is not valid gzip (damaged at compressed byte " + std::to_string(stopped_at) + ")");
      case StreamEnd::OutOfMemory: return trace::failure("out of memory inflating " + file.string());
    }
  }
  std::memset(text.out.get() + text.size, 0, padding);
  TextBuffer result(std::move(text.out), text.size, text.capacity, padding);
  if (cut) result.setGzipCut(*cut);
  return result;
}

}  // namespace syncopate::analyzer::import
