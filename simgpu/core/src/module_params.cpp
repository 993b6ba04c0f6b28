// The fat binary container and the cubin's kernel info records are NVIDIA's, undocumented but
// stable since CUDA 9 and read the same way by every tool that forwards launches without a GPU
// (cuobjdump prints them as EIATTR_KPARAM_INFO). Every read is bounds-checked: a module that
// does not parse only leaves its kernels to the layouts their names give.
#include <simgpu/core/module_params.hpp>

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace simgpu {
namespace {

constexpr std::uint32_t kWrapperMagic = 0x466243b1;  // __fatBinC_Wrapper_t
constexpr std::uint32_t kFatBinaryMagic = 0xBA55ED50;
constexpr std::uint16_t kEntryCubin = 2;
constexpr std::uint64_t kEntryCompressed = 0x2000;
constexpr std::uint64_t kEntryCompressedZstd = 0x8000;
constexpr std::uint8_t kFormatValueList = 0x04;  // EIFMT_SVAL: a size, then that many bytes
constexpr std::uint8_t kAttributeParamInfo = 0x17;  // EIATTR_KPARAM_INFO
constexpr std::string_view kInfoPrefix = ".nv.info.";

template <class T>
bool readAt(const unsigned char* bytes, std::size_t size, std::size_t at, T& out) {
  if (at > size || size - at < sizeof(T)) return false;
  std::memcpy(&out, bytes + at, sizeof(T));
  return true;
}

// One ".nv.info.<kernel>" section: its parameter records, in ordinal order; empty when the
// records are not those of parameters 0..n-1.
std::vector<ParamSpan> paramsOf(const unsigned char* info, std::size_t size) {
  std::vector<ParamSpan> params;
  std::vector<bool> seen;
  for (std::size_t at = 0; at + 4 <= size;) {
    const std::uint8_t format = info[at];
    const std::uint8_t attribute = info[at + 1];
    std::uint16_t length = 0;
    readAt(info, size, at + 2, length);
    at += 4;
    if (format != kFormatValueList) continue;  // the others carry their value in the header
    if (attribute == kAttributeParamInfo && length >= 12 && at + length <= size) {
      std::uint16_t ordinal = 0, offset = 0;
      std::uint32_t flags = 0;
      readAt(info, size, at + 4, ordinal);
      readAt(info, size, at + 6, offset);
      readAt(info, size, at + 8, flags);
      if (ordinal >= params.size()) {
        params.resize(ordinal + 1u);
        seen.resize(ordinal + 1u, false);
      }
      params[ordinal] = {offset, (flags >> 18) & 0x3fff};
      seen[ordinal] = true;
    }
    at += length;
  }
  if (std::find(seen.begin(), seen.end(), false) != seen.end()) params.clear();
  return params;
}

}  // namespace

ModuleParamLayouts readCubinParamLayouts(const unsigned char* cubin, std::size_t size) {
  ModuleParamLayouts layouts;
  Elf64_Ehdr header{};
  if (!readAt(cubin, size, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_shentsize != sizeof(Elf64_Shdr)) {
    return layouts;
  }
  Elf64_Shdr names{};
  if (!readAt(cubin, size, header.e_shoff + header.e_shstrndx * sizeof(Elf64_Shdr), names)) return layouts;
  for (std::size_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section{};
    if (!readAt(cubin, size, header.e_shoff + i * sizeof(Elf64_Shdr), section)) return layouts;
    if (section.sh_name >= names.sh_size || names.sh_offset > size || section.sh_offset > size ||
        section.sh_size > size - section.sh_offset) {
      continue;
    }
    const auto* name = reinterpret_cast<const char*>(cubin + names.sh_offset + section.sh_name);
    const std::string_view section_name(name, strnlen(name, std::min<std::size_t>(names.sh_size - section.sh_name,
                                                                                  size - names.sh_offset - section.sh_name)));
    if (!section_name.starts_with(kInfoPrefix)) continue;
    std::vector<ParamSpan> params = paramsOf(cubin + section.sh_offset, section.sh_size);
    // A kernel without parameters has no records: an empty list is its layout.
    layouts.emplace(std::string(section_name.substr(kInfoPrefix.size())), std::move(params));
  }
  return layouts;
}

ModuleParamLayouts readModuleParamLayouts(const void* fat_binary_wrapper) {
  struct Wrapper {
    std::uint32_t magic;
    std::uint32_t version;
    const unsigned char* data;
    const void* filename_or_fatbins;
  };
  Wrapper wrapper{};
  if (fat_binary_wrapper == nullptr) return {};
  std::memcpy(&wrapper, fat_binary_wrapper, sizeof wrapper);
  if (wrapper.magic != kWrapperMagic || wrapper.data == nullptr) return {};
  std::uint32_t magic = 0;
  std::uint16_t header_size = 0;
  std::uint64_t entries_size = 0;
  std::memcpy(&magic, wrapper.data, sizeof magic);
  std::memcpy(&header_size, wrapper.data + 6, sizeof header_size);
  std::memcpy(&entries_size, wrapper.data + 8, sizeof entries_size);
  if (magic != kFatBinaryMagic || entries_size > (std::uint64_t{1} << 32)) return {};
  const unsigned char* entries = wrapper.data + header_size;
  for (std::uint64_t at = 0; at + 64 <= entries_size;) {
    std::uint16_t kind = 0;
    std::uint32_t entry_header = 0;
    std::uint64_t payload = 0, flags = 0;
    readAt(entries, entries_size, at, kind);
    readAt(entries, entries_size, at + 4, entry_header);
    readAt(entries, entries_size, at + 8, payload);
    readAt(entries, entries_size, at + 40, flags);
    if (entry_header < 64 || payload > entries_size - at - entry_header) return {};
    const bool compressed = (flags & (kEntryCompressed | kEntryCompressedZstd)) != 0;
    if (kind == kEntryCubin && !compressed) {
      ModuleParamLayouts layouts = readCubinParamLayouts(entries + at + entry_header, payload);
      if (!layouts.empty()) return layouts;  // every architecture's cubin has the same layouts
    }
    at += entry_header + payload;
  }
  return {};
}

}  // namespace simgpu
