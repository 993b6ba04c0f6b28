#include "simgpu/nccl/unique_id.hpp"

#include <sys/random.h>

#include <cstring>
#include <random>

namespace simgpu::nccl {
namespace {

constexpr char kIdMagic[16] = "simgpu-nccl-id1";  // 15 characters and the terminator

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string hex(const std::uint8_t* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

}  // namespace

CommKey randomCommKey() {
  CommKey key;
  std::size_t filled = 0;
  while (filled < key.bytes.size()) {
    const ssize_t got = getrandom(key.bytes.data() + filled, key.bytes.size() - filled, 0);
    if (got <= 0) break;
    filled += static_cast<std::size_t>(got);
  }
  if (filled < key.bytes.size()) {
    // getrandom is unavailable (very old kernel or seccomp): fall back to the C++ device.
    std::random_device device;
    for (auto& b : key.bytes) b = static_cast<std::uint8_t>(device());
  }
  return key;
}

ncclUniqueId toUniqueId(const CommKey& key) {
  ncclUniqueId id;
  std::memset(id.internal, 0, sizeof(id.internal));
  std::memcpy(id.internal, kIdMagic, sizeof(kIdMagic));
  std::memcpy(id.internal + sizeof(kIdMagic), key.bytes.data(), key.bytes.size());
  return id;
}

bool fromUniqueId(const ncclUniqueId& id, CommKey* key) {
  if (std::memcmp(id.internal, kIdMagic, sizeof(kIdMagic)) != 0) return false;
  std::memcpy(key->bytes.data(), id.internal + sizeof(kIdMagic), key->bytes.size());
  return true;
}

CommKey deriveCommKey(const CommKey& parent, std::uint64_t salt_a, std::uint64_t salt_b) {
  std::uint64_t words[2];
  std::memcpy(words, parent.bytes.data(), sizeof(words));
  std::uint64_t h0 = splitmix64(words[0] ^ splitmix64(salt_a));
  std::uint64_t h1 = splitmix64(words[1] ^ splitmix64(salt_b ^ h0));
  h0 = splitmix64(h0 ^ h1);
  CommKey child;
  std::memcpy(child.bytes.data(), &h0, sizeof(h0));
  std::memcpy(child.bytes.data() + sizeof(h0), &h1, sizeof(h1));
  return child;
}

std::string segmentName(const CommKey& key) {
  return "/" + std::string(kSegmentPrefix) + hex(key.bytes.data(), key.bytes.size());
}

std::string shortHex(const CommKey& key) { return hex(key.bytes.data(), 4); }

}  // namespace simgpu::nccl
