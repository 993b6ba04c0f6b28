// Level-of-detail summaries of one lane, computed once per lane on a loader worker so that
// paintEvent only walks what is ready (docs/gui.md, "Level of detail"; Tracy's merged zones).
//
// Level L merges, among the lane's items in time order, every run of consecutive items that
// are each narrower than threshold_L and separated by gaps narrower than threshold_L into one
// block that keeps how many items it holds, how busy it was and the kind that filled most of
// it. Level L is built from level L-1, thresholds grow by 4 from 16 ns, and a level is kept
// only when it holds at most half the blocks of the last kept one (so the summaries of a lane
// never cost more than its items do, twice over).
//
// Drawing at a resolution where items narrower than `min_ns` cannot be told apart uses the
// coarsest kept level whose threshold is at most `min_ns`: each of its blocks then covers at
// least that threshold of time (its own width or the gap after it), so what is drawn grows
// with the width of the window in pixels, not with the number of ops in it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "syncopate/gui/model/visual_kind.hpp"

namespace syncopate::gui {

struct LodBlock {
  std::int64_t start = 0, end = 0;
  std::int64_t busy_ns = 0;       // summed durations of the items inside
  std::uint32_t first = 0;        // position of its first item in the lane
  std::uint32_t count = 0;        // items inside; 1: the item itself
  VisualKind kind = VisualKind::Compute;  // the kind with the most busy time inside
};

struct LodLevel {
  std::int64_t threshold_ns = 0;
  std::vector<LodBlock> blocks;   // by start, not overlapping
};

class LaneLod {
 public:
  static constexpr std::int64_t kFirstThresholdNs = 16;
  static constexpr int kThresholdFactor = 4;

  // Items by start, not overlapping (end[i] <= start[i+1]).
  static LaneLod build(std::span<const std::int64_t> start, std::span<const std::int64_t> end,
                       std::span<const VisualKind> kind);

  // The level to draw when items narrower than `min_ns` merge; nullptr: draw the items themselves.
  const LodLevel* levelFor(double min_ns) const;
  const std::vector<LodLevel>& levels() const { return levels_; }
  std::size_t bytes() const;

 private:
  std::vector<LodLevel> levels_;  // finest first
};

// Blocks of `level` that intersect [t0, t1), as a range of positions in level.blocks.
struct BlockRange {
  std::size_t first = 0, last = 0;  // [first, last)
};
BlockRange visibleBlocks(const LodLevel& level, std::int64_t t0, std::int64_t t1);

}  // namespace syncopate::gui
