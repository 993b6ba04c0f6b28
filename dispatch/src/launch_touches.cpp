#include "syncopate/dispatch/launch_touches.hpp"

#include <algorithm>
#include <cstring>

#include "syncopate/dispatch/cuda_headers.hpp"
#include "syncopate/dispatch/device_memory.hpp"
#include "syncopate/trace/records.hpp"

namespace syncopate::preload {
namespace {

constexpr std::uint32_t kWord = sizeof(std::uint64_t);
// The most entries of a driver launch's `extra` array looked at: it has three in practice.
constexpr int kMaxExtraEntries = 16;

struct PackedBuffer {
  const unsigned char* bytes = nullptr;
  std::size_t size = 0;
  bool complete = true;  // every entry was understood
};

// The packed parameter buffer a driver launch may pass instead of an argument array.
PackedBuffer packedBuffer(void* const* extra) noexcept {
  PackedBuffer buffer;
  int i = 0;
  for (; i < kMaxExtraEntries && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
      buffer.bytes = static_cast<const unsigned char*>(extra[i + 1]);
    } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1] != nullptr) {
      std::memcpy(&buffer.size, extra[i + 1], sizeof buffer.size);
    } else {
      buffer.complete = false;
    }
  }
  if (i >= kMaxExtraEntries) buffer.complete = false;
  return buffer;
}

std::uint64_t wordAt(const unsigned char* bytes) noexcept {
  std::uint64_t word;
  std::memcpy(&word, bytes, sizeof word);  // host copies of parameters need not be aligned
  return word;
}

class Touches {
 public:
  explicit Touches(LaunchTouch* out) noexcept : out_(out) {}
  bool add(std::uint64_t address, std::uint32_t parameter) noexcept {
    if (count_ == kMaxLaunchTouches) return false;
    out_[count_++] = {address, static_cast<std::uint16_t>(parameter)};
    return true;
  }
  int count() const noexcept { return count_; }

 private:
  LaunchTouch* out_;
  int count_ = 0;
};

// The words of `bytes` (a parameter that lies at `offset` in the parameter buffer) that sit at
// 8-byte-aligned offsets of the buffer and fall inside known device memory.
bool scan(const unsigned char* bytes, std::uint32_t offset, std::uint32_t size, std::uint32_t parameter,
          DeviceMemoryMap::Reading& memory, Touches& touches) noexcept {
  const std::uint32_t first = (offset + kWord - 1) / kWord * kWord;
  for (std::uint32_t at = first; at + kWord <= offset + size; at += kWord) {
    const std::uint64_t word = wordAt(bytes + (at - offset));
    if (word != 0 && memory.contains(word) && !touches.add(word, parameter)) return false;
  }
  return true;
}

// One pass over the parameters with one reading of the memory map; -1: anything.
int collect(const ParamLayout& layout, void* const* args, const PackedBuffer& packed,
            DeviceMemoryMap::Reading& memory, LaunchTouch* out) noexcept {
  Touches touches(out);
  if (!layout.readable) {
    // Only a packed buffer of known size can still be read: all of it is scanned.
    const auto size = static_cast<std::uint32_t>(std::min<std::size_t>(packed.size, UINT32_MAX));
    for (std::uint32_t at = 0; at + kWord <= size; at += kWord) {
      const std::uint64_t word = wordAt(packed.bytes + at);
      if (word != 0 && memory.contains(word) && !touches.add(word, trace::kPackedWordArgIndex + at / kWord)) return -1;
    }
    return touches.count();
  }
  for (std::uint32_t i = 0; i < layout.count; ++i) {
    const ParamSlot& slot = layout.slots[i];
    if (slot.kind == ParamKind::Scalar) continue;
    const auto* value = args != nullptr ? static_cast<const unsigned char*>(args[i]) : packed.bytes + slot.offset;
    if (value == nullptr) return -1;
    if (slot.kind == ParamKind::Pointer) {
      const std::uint64_t address = wordAt(value);
      if (address != 0 && !touches.add(address, i)) return -1;
    } else if (!scan(value, slot.offset, slot.size, i, memory, touches)) {
      return -1;
    }
  }
  return touches.count();
}

}  // namespace

int touchesOf(const ParamLayout& layout, void* const* args, void* const* extra, LaunchTouch* out) noexcept {
  if (layout.readable && layout.count == 0) return 0;  // nothing to read, whatever the launch passed
  PackedBuffer packed;
  if (args == nullptr) {
    if (extra != nullptr) packed = packedBuffer(extra);
    if (packed.bytes == nullptr || !packed.complete) return -1;
    // A buffer shorter than the layout says cannot be read; one of unknown layout needs its size.
    if (layout.readable ? packed.size < layout.buffer_bytes : packed.size == 0) return -1;
  } else if (!layout.readable) {
    return -1;  // nothing says how large each argument is
  }
  if (touchesArePointerArguments(layout, args)) return pointerArgumentTouches(layout, args, out);
  if (layout.readable && !layout.scans) {
    // Pointers and numbers only, in a packed buffer: the map is never read.
    DeviceMemoryMap::Reading unused;
    return collect(layout, args, packed, unused, out);
  }
  for (;;) {
    DeviceMemoryMap::Reading memory = deviceMemory().read();
    const int count = collect(layout, args, packed, memory, out);
    if (!memory.valid()) continue;  // a writer came between: read again
    return memory.complete() ? count : -1;
  }
}

}  // namespace syncopate::preload
