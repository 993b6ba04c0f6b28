#include "syncopate/gui/model/lod.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace syncopate::gui {

namespace {

// A block being built, with its busy time per kind (only while building).
struct Building {
  LodBlock block;
  std::array<std::int64_t, kVisualKinds> busy_by_kind{};
};

VisualKind dominant(const Building& b) {
  std::size_t best = static_cast<std::size_t>(b.block.kind);
  for (std::size_t k = 0; k < kVisualKinds; ++k)
    if (b.busy_by_kind[k] > b.busy_by_kind[best]) best = k;
  return static_cast<VisualKind>(best);
}

// One coarser level from `finer` (blocks by start).
std::vector<LodBlock> merge(const std::vector<LodBlock>& finer, std::int64_t threshold) {
  std::vector<LodBlock> out;
  out.reserve(finer.size() / 2 + 1);
  Building cur;
  bool open = false;     // cur holds something
  bool growing = false;  // cur is made of narrow blocks and may take the next one
  auto close = [&] {
    if (!open) return;
    if (cur.block.count > 1) cur.block.kind = dominant(cur);
    out.push_back(cur.block);
    open = false;
  };
  for (const LodBlock& b : finer) {
    const bool narrow = b.end - b.start < threshold;
    if (open && growing && narrow && b.start - cur.block.end < threshold) {
      cur.block.end = std::max(cur.block.end, b.end);
      cur.block.busy_ns += b.busy_ns;
      cur.block.count += b.count;
      cur.busy_by_kind[static_cast<std::size_t>(b.kind)] += b.busy_ns;
      continue;
    }
    close();
    cur = Building{};
    cur.block = b;
    cur.busy_by_kind[static_cast<std::size_t>(b.kind)] = b.busy_ns;
    open = true;
    growing = narrow;
  }
  close();
  return out;
}

// The smallest threshold at which merge() would change `blocks`: two neighbours merge once
// both are narrower than it and so is the gap between them.
std::int64_t firstUsefulThreshold(const std::vector<LodBlock>& blocks) {
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  for (std::size_t i = 0; i + 1 < blocks.size(); ++i) {
    const LodBlock& a = blocks[i];
    const LodBlock& b = blocks[i + 1];
    best = std::min(best, std::max({a.end - a.start, b.end - b.start, b.start - a.end}) + 1);
  }
  return best;
}

}  // namespace

LaneLod LaneLod::build(std::span<const std::int64_t> start, std::span<const std::int64_t> end,
                       std::span<const VisualKind> kind) {
  LaneLod lod;
  const std::size_t n = start.size();
  if (n < 2) return lod;
  std::vector<LodBlock> chain(n);
  for (std::size_t i = 0; i < n; ++i) {
    chain[i] = {start[i], end[i], end[i] - start[i], static_cast<std::uint32_t>(i), 1, kind[i]};
  }
  const std::int64_t span = end.back() > start.front() ? end.back() - start.front() : 1;
  std::size_t kept = n;
  for (std::int64_t threshold = kFirstThresholdNs; chain.size() > 1; threshold *= kThresholdFactor) {
    // Levels that would merge nothing are skipped without a pass over the lane.
    const std::int64_t useful = firstUsefulThreshold(chain);
    while (threshold < useful && threshold <= span) threshold *= kThresholdFactor;
    if (threshold > span && threshold < useful) break;
    chain = merge(chain, threshold);
    if (chain.size() * 2 <= kept) {
      lod.levels_.push_back({threshold, chain});
      kept = chain.size();
    }
    // Past the lane's whole span every further level would be the same single run of blocks.
    if (threshold > span) break;
  }
  return lod;
}

const LodLevel* LaneLod::levelFor(double min_ns) const {
  const LodLevel* best = nullptr;
  for (const LodLevel& l : levels_) {
    if (static_cast<double>(l.threshold_ns) > min_ns) break;
    best = &l;
  }
  return best;
}

std::size_t LaneLod::bytes() const {
  std::size_t b = 0;
  for (const LodLevel& l : levels_) b += l.blocks.capacity() * sizeof(LodBlock);
  return b;
}

BlockRange visibleBlocks(const LodLevel& level, std::int64_t t0, std::int64_t t1) {
  const auto& bs = level.blocks;
  // Blocks do not overlap, so their ends are sorted too.
  auto first = std::upper_bound(bs.begin(), bs.end(), t0, [](std::int64_t t, const LodBlock& b) { return t < b.end; });
  auto last = std::lower_bound(first, bs.end(), t1, [](const LodBlock& b, std::int64_t t) { return b.start < t; });
  return {static_cast<std::size_t>(first - bs.begin()), static_cast<std::size_t>(last - bs.begin())};
}

}  // namespace syncopate::gui
