#include "input_file.hpp"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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

// The size the last member says it inflates to (ISIZE, modulo 2^32): a first guess only.
std::size_t sizeHint(const std::vector<unsigned char>& b) {
  if (b.size() < 18) return 0;
  const unsigned char* p = b.data() + b.size() - 4;
  return static_cast<std::size_t>(p[0]) | (static_cast<std::size_t>(p[1]) << 8) | (static_cast<std::size_t>(p[2]) << 16) |
         (static_cast<std::size_t>(p[3]) << 24);
}

}  // namespace

trace::Result<TextBuffer> readTextFile(const std::filesystem::path& file, std::size_t padding) {
  auto raw = readAll(file);
  if (!raw) return raw.status();
  std::vector<unsigned char>& in = *raw;
  if (!isGzip(in)) {
    BigBuffer buf = allocateBig(in.size() + padding);
    if (!buf) return trace::failure("out of memory reading " + file.string());
    std::memcpy(buf.get(), in.data(), in.size());
    std::memset(buf.get() + in.size(), 0, padding);
    return TextBuffer(std::move(buf), in.size(), in.size() + padding);
  }
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  if (!d) return trace::failure("out of memory inflating " + file.string());
  std::size_t capacity = std::max<std::size_t>(sizeHint(in), in.size() * 4) + padding;
  BigBuffer out = allocateBig(capacity);
  if (!out) {
    libdeflate_free_decompressor(d);
    return trace::failure("out of memory inflating " + file.string());
  }
  std::size_t in_pos = 0, out_pos = 0;
  std::string failure;
  while (in_pos < in.size()) {
    std::size_t in_used = 0, out_got = 0;
    const libdeflate_result r = libdeflate_gzip_decompress_ex(d, in.data() + in_pos, in.size() - in_pos, out.get() + out_pos,
                                                              capacity - padding - out_pos, &in_used, &out_got);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
      // Grow and retry this member (ISIZE is only the last member's size, modulo 4 GiB).
      const std::size_t bigger = 2 * capacity;
      BigBuffer grown = allocateBig(bigger);
      if (!grown) {
        failure = "out of memory inflating " + file.string();
        break;
      }
      std::memcpy(grown.get(), out.get(), out_pos);
      out = std::move(grown);
      capacity = bigger;
      continue;
    }
    if (r != LIBDEFLATE_SUCCESS) {
      failure = file.string() + " is not valid gzip (truncated or damaged at compressed byte " + std::to_string(in_pos) + ")";
      break;
    }
    in_pos += in_used;
    out_pos += out_got;
  }
  libdeflate_free_decompressor(d);
  if (!failure.empty()) return trace::failure(failure);
  std::memset(out.get() + out_pos, 0, padding);
  return TextBuffer(std::move(out), out_pos, capacity);
}

}  // namespace syncopate::analyzer::import
