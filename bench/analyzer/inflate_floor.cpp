// The floor of any importer of a gzip trace: the file read and inflated by libdeflate alone
// (the library `syncopate import` inflates with), nothing parsed or written. import_floor.sh
// times it beside `zcat` and the import.
//
//   syncopate_inflate_floor FILE
// prints: inflate_floor FILE compressed_bytes=N inflated_bytes=M
#include <libdeflate.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

namespace {

struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: syncopate_inflate_floor FILE\n");
    return 2;
  }
  std::vector<unsigned char> file;
  if (std::FILE* in = std::fopen(argv[1], "rb")) {
    unsigned char chunk[1 << 16];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, in)) > 0;) file.insert(file.end(), chunk, chunk + n);
    std::fclose(in);
  }
  if (file.size() < 18) {
    std::fprintf(stderr, "syncopate_inflate_floor: cannot read %s, or it is not gzip\n", argv[1]);
    return 1;
  }
  std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> d(libdeflate_alloc_decompressor());
  // The last member's ISIZE (size modulo 2^32) as a first guess, doubled until it fits.
  const unsigned char* isize = file.data() + file.size() - 4;
  std::size_t capacity = static_cast<std::size_t>(isize[0] | isize[1] << 8 | isize[2] << 16) |
                         static_cast<std::size_t>(isize[3]) << 24;
  capacity = std::max<std::size_t>(capacity, 1 << 20);
  std::vector<unsigned char> out;
  std::size_t total = 0;
  for (std::size_t at = 0; at < file.size();) {  // members one after another, as gunzip reads them
    std::size_t used = 0, produced = 0;
    libdeflate_result r = LIBDEFLATE_INSUFFICIENT_SPACE;
    while (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
      if (out.size() < total + capacity) out.resize(total + capacity);
      r = libdeflate_gzip_decompress_ex(d.get(), file.data() + at, file.size() - at, out.data() + total,
                                        out.size() - total, &used, &produced);
      if (r == LIBDEFLATE_INSUFFICIENT_SPACE) capacity *= 2;
    }
    if (r != LIBDEFLATE_SUCCESS) {
      std::fprintf(stderr, "syncopate_inflate_floor: %s is not a whole gzip stream (libdeflate result %d)\n", argv[1],
                   static_cast<int>(r));
      return 1;
    }
    at += used;
    total += produced;
  }
  std::printf("inflate_floor %s compressed_bytes=%zu inflated_bytes=%zu\n", argv[1], file.size(), total);
  return 0;
}
