#include "syncopate/gui/model/timeline_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace syncopate::gui {

void TimelineModel::setRuns(std::vector<std::shared_ptr<const LoadedRun>> runs) {
  runs_ = std::move(runs);
  analyses_.assign(runs_.size(), nullptr);
  offsets_.assign(runs_.size(), 0);
  lanes_.clear();
  groups_.clear();
  lane_base_.clear();
  group_base_.clear();
  source_lanes_.clear();
  for (const auto& run : runs_) {
    const auto lane_base = static_cast<std::uint32_t>(lanes_.size());
    const auto group_base = static_cast<std::uint32_t>(groups_.size());
    lane_base_.push_back(lane_base);
    group_base_.push_back(group_base);
    for (const Lane& l : run->lanes.lanes) lanes_.push_back(&l);
    for (LaneGroup g : run->lanes.groups) {
      if (g.parent >= 0) g.parent += static_cast<int>(group_base);
      for (auto& c : g.children) c += group_base;
      for (auto& l : g.lanes) l += lane_base;
      groups_.push_back(std::move(g));
    }
    const auto& m = run->model;
    SourceLanes src;
    src.by_stream.resize(m.streams.size());
    src.calls_by_thread.resize(m.threads.size());
    src.ranges_by_thread.resize(m.threads.size());
    src.unthreaded_ranges_by_rank.resize(m.ranks.size());
    src.host_syncs_by_rank.resize(m.ranks.size());
    for (std::uint32_t i = 0; i < run->lanes.lanes.size(); ++i) {
      const Lane& l = run->lanes.lanes[i];
      const std::uint32_t global = lane_base + i;
      switch (l.kind) {
        case LaneKind::Stream: src.by_stream[l.source].push_back(global); break;
        case LaneKind::Thread: src.calls_by_thread[l.source].push_back(global); break;
        case LaneKind::Ranges:
          if (l.source == kNone) src.unthreaded_ranges_by_rank[l.rank].push_back(global);
          else src.ranges_by_thread[l.source].push_back(global);
          break;
        case LaneKind::HostSyncs: src.host_syncs_by_rank[l.rank].push_back(global); break;
      }
    }
    source_lanes_.push_back(std::move(src));
  }
  collapsed_.assign(groups_.size(), false);
  relayout();
}

std::vector<RunOnView> TimelineModel::runsOnView() const {
  std::vector<RunOnView> out;
  for (std::size_t r = 0; r < runs_.size(); ++r) out.push_back({runs_[r], offsets_[r]});
  return out;
}

void TimelineModel::setAnalysis(std::uint32_t run, std::shared_ptr<const analyzer::Analysis> analysis) {
  if (run < analyses_.size()) analyses_[run] = std::move(analysis);
}

const analyzer::Analysis* TimelineModel::analysis(std::uint32_t run) const {
  return run < analyses_.size() ? analyses_[run].get() : nullptr;
}

void TimelineModel::setDisplayOffset(std::uint32_t run, std::int64_t offset_ns) {
  if (run < offsets_.size()) offsets_[run] = offset_ns;
}

std::int64_t TimelineModel::displayOffset(std::uint32_t run) const {
  return run < offsets_.size() ? offsets_[run] : 0;
}

std::int64_t TimelineModel::beginNs() const {
  std::int64_t b = std::numeric_limits<std::int64_t>::max();
  for (std::uint32_t r = 0; r < runs_.size(); ++r) b = std::min(b, runs_[r]->begin_ns + offsets_[r]);
  return runs_.empty() ? 0 : b;
}

std::int64_t TimelineModel::endNs() const {
  std::int64_t e = std::numeric_limits<std::int64_t>::min();
  for (std::uint32_t r = 0; r < runs_.size(); ++r) e = std::max(e, runs_[r]->end_ns + offsets_[r]);
  return runs_.empty() ? 0 : e;
}


std::optional<std::int64_t> TimelineModel::alignRunsOnIteration(std::optional<std::int64_t> number) {
  if (runs_.size() < 2) return std::nullopt;
  const LoadedRun& a = *runs_[0];
  const LoadedRun& b = *runs_[1];
  if (!number) {
    for (const IterationSpan& s : a.iteration_spans) {
      if (b.iteration(s.number)) {
        number = s.number;
        break;
      }
    }
  }
  const IterationSpan* sa = number ? a.iteration(*number) : nullptr;
  const IterationSpan* sb = number ? b.iteration(*number) : nullptr;
  if (sa && sb) {
    offsets_[1] = offsets_[0] + sa->start - sb->start;
    return number;
  }
  offsets_[1] = offsets_[0] + runs_[0]->begin_ns - runs_[1]->begin_ns;
  return std::nullopt;
}

int TimelineModel::rankGroup(std::uint32_t run, Index rank) const {
  for (std::uint32_t g = 0; g < groups_.size(); ++g)
    if (groups_[g].kind == GroupKind::Rank && groups_[g].run == run && groups_[g].rank == rank)
      return static_cast<int>(g);
  return -1;
}

void TimelineModel::setCollapsed(std::uint32_t group, bool collapsed) {
  if (group >= collapsed_.size() || collapsed_[group] == collapsed) return;
  collapsed_[group] = collapsed;
  relayout();
}

void TimelineModel::setAllRanksCollapsed(bool collapsed) {
  for (std::uint32_t g = 0; g < groups_.size(); ++g)
    if (groups_[g].kind == GroupKind::Rank) collapsed_[g] = collapsed;
  relayout();
}

void TimelineModel::setLaneKindShown(LaneKind kind, bool shown) {
  shown_kinds_[static_cast<std::size_t>(kind)] = shown;
  relayout();
}

void TimelineModel::relayout() {
  rows_.clear();
  double y = 0;
  auto add = [&](LayoutRow::Kind kind, std::uint32_t index, int indent, double height) {
    rows_.push_back({kind, index, indent, y, height});
    y += height;
  };
  const bool show_runs = runs_.size() > 1;
  // Depth-first over the group tree; run groups only get a header when comparing.
  auto visit = [&](auto&& self, std::uint32_t g, int indent) -> void {
    const LaneGroup& group = groups_[g];
    const bool header = group.kind != GroupKind::Run || show_runs;
    if (header) add(LayoutRow::Kind::Group, g, indent, kGroupHeight);
    const int inner = header ? indent + 1 : indent;
    if (group.kind == GroupKind::Rank) add(LayoutRow::Kind::RankStrip, g, inner, kStripHeight);
    if (collapsed_[g]) return;
    for (std::uint32_t c : group.children) self(self, c, inner);
    for (std::uint32_t l : group.lanes)
      if (laneKindShown(lanes_[l]->kind)) add(LayoutRow::Kind::Lane, l, inner, kLaneHeight);
  };
  for (std::uint32_t g = 0; g < groups_.size(); ++g)
    if (groups_[g].kind == GroupKind::Run) visit(visit, g, 0);
}

int TimelineModel::rowAt(double y) const {
  if (rows_.empty() || y < 0) return -1;
  auto it = std::upper_bound(rows_.begin(), rows_.end(), y, [](double v, const LayoutRow& r) { return v < r.y; });
  if (it == rows_.begin()) return -1;
  --it;
  return y < it->y + it->height ? static_cast<int>(it - rows_.begin()) : -1;
}

int TimelineModel::rowOfLane(std::uint32_t lane) const {
  for (std::size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].kind == LayoutRow::Kind::Lane && rows_[i].index == lane) return static_cast<int>(i);
  return -1;
}

int TimelineModel::rowOfGroup(std::uint32_t group) const {
  for (std::size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].kind == LayoutRow::Kind::Group && rows_[i].index == group) return static_cast<int>(i);
  return -1;
}

const LodLevel* TimelineModel::lodFor(std::uint32_t lane, double ns_per_pixel) const {
  return lanes_[lane]->lod.levelFor(ns_per_pixel * kMergePixels);
}

Hit TimelineModel::hitTest(std::uint32_t lane_index, std::int64_t t, double ns_per_pixel, double tolerance_px) const {
  Hit hit;
  hit.lane = lane_index;
  const Lane& l = *lanes_[lane_index];
  if (l.size() == 0) return hit;
  const std::int64_t offset = displayOffset(l.run);
  const std::int64_t at = t - offset;  // aligned time
  const auto tol = static_cast<std::int64_t>(tolerance_px * ns_per_pixel);
  // Distance from `at` to [s, e] (0 inside).
  auto distance = [&](std::int64_t s, std::int64_t e) -> std::int64_t { return at < s ? s - at : at > e ? at - e : 0; };
  std::int64_t best = tol;
  bool any = false;
  if (const LodLevel* level = lodFor(lane_index, ns_per_pixel)) {
    const BlockRange r = visibleBlocks(*level, at - tol, at + tol + 1);
    for (std::size_t i = r.first; i < r.last; ++i) {
      const LodBlock& b = level->blocks[i];
      const std::int64_t d = distance(b.start, b.end);
      if (d <= best && (!any || d < best)) {
        best = d, any = true;
        hit.first = b.first, hit.count = b.count, hit.start = b.start, hit.end = b.end, hit.kind = b.kind;
      }
    }
  } else {
    // Items by start, not overlapping: those that may be within tolerance are around `at`.
    auto it = std::upper_bound(l.end.begin(), l.end.end(), at - tol - 1);
    for (auto i = static_cast<std::size_t>(it - l.end.begin()); i < l.size(); ++i) {
      if (l.start[i] > at + tol) break;
      const std::int64_t d = distance(l.start[i], l.end[i]);
      if (d <= best && (!any || d < best)) {
        best = d, any = true;
        hit.first = static_cast<std::uint32_t>(i), hit.count = 1, hit.start = l.start[i], hit.end = l.end[i];
        hit.kind = l.visual[i];
      }
    }
  }
  if (any) {
    hit.start += offset;
    hit.end += offset;
  }
  return hit;
}

std::optional<LanePosition> TimelineModel::locate(const ItemRef& item) const {
  if (!item.valid() || item.run >= runs_.size()) return std::nullopt;
  const auto& m = runs_[item.run]->model;
  const SourceLanes& src = source_lanes_[item.run];
  static const std::vector<std::uint32_t> kNoLanes;
  const std::vector<std::uint32_t>* candidates = &kNoLanes;
  std::int64_t start = 0;
  switch (item.table) {
    case ItemTable::Op:
      if (item.index >= m.ops.size()) return std::nullopt;
      candidates = &src.by_stream[m.ops.stream[item.index]];
      start = m.ops.start[item.index];
      break;
    case ItemTable::ApiCall:
      if (item.index >= m.api_calls.size()) return std::nullopt;
      candidates = &src.calls_by_thread[m.api_calls.thread[item.index]];
      start = m.api_calls.start[item.index];
      break;
    case ItemTable::Range: {
      if (item.index >= m.ranges.size()) return std::nullopt;
      const Index thread = m.ranges.thread[item.index];
      candidates = thread == kNone ? &src.unthreaded_ranges_by_rank[m.ranges.rank[item.index]]
                                   : &src.ranges_by_thread[thread];
      start = m.ranges.start[item.index];
      break;
    }
    case ItemTable::HostSync:
      if (item.index >= m.host_syncs.size()) return std::nullopt;
      candidates = &src.host_syncs_by_rank[m.host_syncs.rank[item.index]];
      start = m.host_syncs.start[item.index];
      break;
  }
  for (std::uint32_t lane_index : *candidates) {
    const Lane& l = *lanes_[lane_index];
    auto it = std::lower_bound(l.start.begin(), l.start.end(), start);
    for (auto i = static_cast<std::size_t>(it - l.start.begin()); i < l.size() && l.start[i] == start; ++i)
      if (l.item[i] == item.index) return LanePosition{lane_index, static_cast<std::uint32_t>(i)};
  }
  return std::nullopt;
}

std::int64_t TimelineModel::displayStart(const LanePosition& p) const {
  const Lane& l = lane(p.lane);
  return l.start[p.pos] + displayOffset(l.run);
}

std::int64_t TimelineModel::displayEnd(const LanePosition& p) const {
  const Lane& l = lane(p.lane);
  return l.end[p.pos] + displayOffset(l.run);
}

}  // namespace syncopate::gui
