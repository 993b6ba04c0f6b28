// Communicator identities. ncclGetUniqueId draws a random 128-bit key (like NCCL's bootstrap
// draws a random magic); every rank that is given the id finds the communicator's shared
// memory segment by the name derived from the key. Communicators made by ncclCommSplit and
// ncclCommShrink derive their key from the parent's, so their ranks need no new id.
#pragma once

#include <nccl.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace simgpu::nccl {

struct CommKey {
  std::array<std::uint8_t, 16> bytes{};
  bool operator==(const CommKey&) const = default;
};

// Every segment name starts with this (in /dev/shm, without the leading slash).
inline constexpr std::string_view kSegmentPrefix = "simgpu-nccl-";

CommKey randomCommKey();
ncclUniqueId toUniqueId(const CommKey& key);
// False when `id` was not made by simgpu's ncclGetUniqueId (e.g. zero-filled or corrupted).
bool fromUniqueId(const ncclUniqueId& id, CommKey* key);
// A deterministic child key: the same on every rank that passes the same arguments.
CommKey deriveCommKey(const CommKey& parent, std::uint64_t salt_a, std::uint64_t salt_b);
std::string segmentName(const CommKey& key);  // "/simgpu-nccl-<32 hex digits>"
std::string shortHex(const CommKey& key);     // the first 8 hex digits, for messages

}  // namespace simgpu::nccl
