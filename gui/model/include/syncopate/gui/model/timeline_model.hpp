// The timeline as data, with no widget: the runs on view (one, or two to compare), their lanes
// in display order with collapsible groups, the vertical layout of the rows, the display time
// of each run (aligned time plus a compare offset), hit-testing and finding an item's lane.
// The view (gui/widgets) only paints what this says and routes input back to it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/gui/model/lanes.hpp"
#include "syncopate/gui/model/loaded_run.hpp"

namespace syncopate::gui {

// A run on view and the offset that maps its aligned time to display time: what a worker
// needs to compute something about the runs without touching the TimelineModel.
struct RunOnView {
  std::shared_ptr<const LoadedRun> run;
  std::int64_t offset = 0;
};

// One row of the layout, top to bottom.
struct LayoutRow {
  enum class Kind : std::uint8_t { Group, Lane, RankStrip };
  Kind kind = Kind::Lane;
  std::uint32_t index = 0;  // Group / RankStrip: group index; Lane: lane index
  int indent = 0;           // nesting depth, for the label column
  double y = 0, height = 0;
};

// What is under a point of a lane: one item, or a level-of-detail block of `count` items.
struct Hit {
  std::uint32_t lane = 0;
  std::uint32_t first = 0;   // position of the first item in the lane
  std::uint32_t count = 0;   // 0: nothing there
  std::int64_t start = 0, end = 0;  // display ns
  VisualKind kind = VisualKind::Compute;
  bool found() const { return count > 0; }
  bool single() const { return count == 1; }
};

// Where an item sits: its lane and its position in the lane.
struct LanePosition {
  std::uint32_t lane = 0;
  std::uint32_t pos = 0;
};

class TimelineModel {
 public:
  static constexpr double kGroupHeight = 20;
  static constexpr double kLaneHeight = 18;
  static constexpr double kStripHeight = 12;

  // Replaces the runs (lanes come from each LoadedRun); expanded groups, zero offsets.
  void setRuns(std::vector<std::shared_ptr<const LoadedRun>> runs);
  std::size_t runCount() const { return runs_.size(); }
  const LoadedRun& run(std::uint32_t r) const { return *runs_[r]; }
  // The runs with their current offsets (a snapshot for workers).
  std::vector<RunOnView> runsOnView() const;

  // The analyzer's analysis of a run once it is ready (nullptr before).
  void setAnalysis(std::uint32_t run, std::shared_ptr<const analyzer::Analysis> analysis);
  const analyzer::Analysis* analysis(std::uint32_t run) const;

  // Display time = aligned time + offset of the item's run.
  void setDisplayOffset(std::uint32_t run, std::int64_t offset_ns);
  std::int64_t displayOffset(std::uint32_t run) const;
  // The earliest and latest display time of any run (0,0 without runs).
  std::int64_t beginNs() const;
  std::int64_t endNs() const;
  // Aligns the second run on the first: the offset that puts the start of iteration `number`
  // (the first iteration number both runs have when nullopt; the runs' beginnings when they
  // share none) of run 1 on that of run 0. Returns the number used, if any.
  std::optional<std::int64_t> alignRunsOnIteration(std::optional<std::int64_t> number = std::nullopt);

  // Lanes and groups of every run, global indices.
  std::size_t laneCount() const { return lanes_.size(); }
  const Lane& lane(std::uint32_t l) const { return *lanes_[l]; }
  std::size_t groupCount() const { return groups_.size(); }
  const LaneGroup& group(std::uint32_t g) const { return groups_[g]; }
  // The Rank group of (run, rank row); -1 when absent.
  int rankGroup(std::uint32_t run, Index rank) const;

  // Collapsing hides a group's lanes and inner groups (a rank keeps its strip).
  void setCollapsed(std::uint32_t group, bool collapsed);
  bool collapsed(std::uint32_t group) const { return collapsed_[group]; }
  void setAllRanksCollapsed(bool collapsed);
  // A filter on what is shown (not on the data): lanes of a hidden kind take no rows.
  void setLaneKindShown(LaneKind kind, bool shown);
  bool laneKindShown(LaneKind kind) const { return shown_kinds_[static_cast<std::size_t>(kind)]; }

  // Rows in display order, with their y (0 at the top of the first row) and height.
  const std::vector<LayoutRow>& rows() const { return rows_; }
  double contentHeight() const { return rows_.empty() ? 0 : rows_.back().y + rows_.back().height; }
  // The row at content height y, or -1.
  int rowAt(double y) const;
  // The row showing lane `lane` (-1 when a collapsed group hides it).
  int rowOfLane(std::uint32_t lane) const;
  int rowOfGroup(std::uint32_t group) const;

  // What is at display time t of `lane`, when one pixel is `ns_per_pixel` long: items within
  // `tolerance_px` pixels count (the nearest wins); at coarse zoom the LOD block drawn there.
  Hit hitTest(std::uint32_t lane, std::int64_t t, double ns_per_pixel, double tolerance_px = 3) const;
  // The level of detail `lane` is drawn at for this resolution (nullptr: its items).
  const LodLevel* lodFor(std::uint32_t lane, double ns_per_pixel) const;
  // Items narrower than this many pixels merge into blocks.
  static constexpr double kMergePixels = 3;

  // The lane and position of an item, when it is on a lane.
  std::optional<LanePosition> locate(const ItemRef& item) const;
  ItemRef itemAt(const LanePosition& p) const { return lane(p.lane).ref(p.pos); }
  // Display start / end of an item on a lane.
  std::int64_t displayStart(const LanePosition& p) const;
  std::int64_t displayEnd(const LanePosition& p) const;

 private:
  void relayout();

  std::vector<std::shared_ptr<const LoadedRun>> runs_;
  std::vector<std::shared_ptr<const analyzer::Analysis>> analyses_;
  std::vector<std::int64_t> offsets_;
  std::vector<const Lane*> lanes_;
  std::vector<std::uint32_t> lane_base_;  // per run: global index of its first lane
  std::vector<std::uint32_t> group_base_; // per run: global index of its first group
  std::vector<LaneGroup> groups_;         // lane and group indices rewritten to global
  std::vector<bool> collapsed_;
  std::array<bool, 4> shown_kinds_{true, true, true, true};  // index: LaneKind
  std::vector<LayoutRow> rows_;
  // Per run, per table: lanes holding items of that table, by source (stream / thread), so
  // locate() is a binary search in one or two lanes.
  struct SourceLanes {
    std::vector<std::vector<std::uint32_t>> by_stream, calls_by_thread, ranges_by_thread;
    std::vector<std::vector<std::uint32_t>> unthreaded_ranges_by_rank, host_syncs_by_rank;
  };
  std::vector<SourceLanes> source_lanes_;
};

}  // namespace syncopate::gui

Q_DECLARE_METATYPE(syncopate::gui::Hit)  // carried by the views' signals
