// Small non-cryptographic hashes, one of each for every part: FNV-1a for signatures, ids and
// checksums, a 64-bit finaliser for open-addressing tables and digests. Deterministic across
// processes and machines, so every rank computes the same value.
#pragma once

#include <cstdint>
#include <string_view>

namespace syncopate::trace {

inline constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;
inline constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;

constexpr std::uint64_t fnv1a(std::uint64_t hash, const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) hash = (hash ^ p[i]) * kFnvPrime;
  return hash;
}

constexpr std::uint64_t fnv1a(std::string_view s, std::uint64_t hash = kFnvOffset) noexcept {
  return fnv1a(hash, s.data(), s.size());
}

// MurmurHash3's 64-bit finaliser: spreads every input bit over the output.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

}  // namespace syncopate::trace
