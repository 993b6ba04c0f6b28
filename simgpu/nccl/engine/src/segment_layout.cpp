#include "simgpu/nccl/segment_layout.hpp"

#include <algorithm>
#include <bit>

namespace simgpu::nccl {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::uint64_t kDefaultChunk = 512 << 10;
constexpr std::uint64_t kP2pBudget = 16 << 20;
constexpr std::uint64_t kMinP2pSlot = 16 << 10;
constexpr std::uint64_t kMaxP2pSlot = 256 << 10;

std::size_t roundUp(std::size_t value, std::size_t to) { return (value + to - 1) / to * to; }

}  // namespace

Geometry makeGeometry(int nranks, std::size_t chunk_override) {
  Geometry g;
  g.nranks = static_cast<std::uint32_t>(nranks);
  const std::uint64_t n = g.nranks;
  if (chunk_override != 0) {
    // A reduce-scatter step carries one element per rank at least (8 bytes each at most).
    g.chunk_bytes = roundUp(std::max<std::uint64_t>(chunk_override, 8 * n), 64);
    g.p2p_slot_bytes = roundUp(chunk_override, 64);
    return g;
  }
  g.chunk_bytes = std::max<std::uint64_t>(kDefaultChunk, roundUp(8 * n, kPage));
  const std::uint64_t per_slot = kP2pBudget / (n * n * kP2pSlots);
  g.p2p_slot_bytes = std::clamp<std::uint64_t>(std::bit_floor(std::max<std::uint64_t>(per_slot, 1)),
                                               kMinP2pSlot, kMaxP2pSlot);
  return g;
}

SegmentLayout::SegmentLayout(const Geometry& geometry) : geometry_(geometry) {
  const std::size_t n = geometry.nranks;
  std::size_t offset = roundUp(sizeof(SegmentHeader), 64);
  ranks_ = offset;
  offset += n * sizeof(RankRecord);
  coll_headers_ = offset;
  offset += n * kCollBuffers * sizeof(CollStepHeader);
  pairs_ = offset;
  offset += n * n * sizeof(PairQueue);
  p2p_headers_ = offset;
  offset += n * n * kP2pSlots * sizeof(P2pSlotHeader);
  coll_data_ = roundUp(offset, kPage);
  offset = coll_data_ + n * kCollBuffers * geometry.chunk_bytes;
  p2p_data_ = roundUp(offset, kPage);
  offset = p2p_data_ + n * n * kP2pSlots * geometry.p2p_slot_bytes;
  total_ = roundUp(offset, kPage);
}

}  // namespace simgpu::nccl
