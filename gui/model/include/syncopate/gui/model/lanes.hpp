// The rows of the timeline and what each one holds, built from a RunModel on a loader worker.
//
// Groups nest run > host > rank; a rank's lanes are, for each of its host threads, the thread's
// API calls and then the thread's NVTX ranges, then NVTX ranges of no known thread, host syncs
// that no API call owns, and last its GPU streams (by device and handle). Items that overlap
// within one source (nested NVTX ranges, or ops that overlap on one stream in an imported
// trace) are stacked onto extra lanes of that source, first fit, so nothing is hidden or dropped.
//
// The extra lanes of a stacked source are labelled "  NVTX [2]", "  ops [2]", ... below the first.
//
// A lane keeps its own copy of its items' times (and their kinds) so that painting, hit-testing
// and the level-of-detail summaries never go back to the run model's tables.
#pragma once

#include <QMetaType>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/gui/model/lod.hpp"
#include "syncopate/gui/model/visual_kind.hpp"

namespace syncopate::gui {

using analyzer::Index;
using analyzer::kNone;

enum class LaneKind : std::uint8_t {
  Thread = 0,     // API calls of a host thread (items: RunModel::api_calls rows)
  Ranges = 1,     // NVTX ranges of a thread, or of no known thread (items: ranges rows)
  Stream = 2,     // GPU ops of a stream (items: ops rows)
  HostSyncs = 3,  // host-blocking syncs with no API call of their own (items: host_syncs rows)
};
std::string_view toString(LaneKind k);

// Which table a lane's item indices point into.
enum class ItemTable : std::uint8_t { Op = 0, ApiCall = 1, Range = 2, HostSync = 3 };
ItemTable itemTableOf(LaneKind k);

// One item of one run: a row of one of its tables.
struct ItemRef {
  std::uint32_t run = 0;
  ItemTable table = ItemTable::Op;
  Index index = kNone;
  bool valid() const { return index != kNone; }
  friend bool operator==(const ItemRef&, const ItemRef&) = default;
};

struct Lane {
  LaneKind kind = LaneKind::Stream;
  std::uint32_t run = 0;
  Index rank = 0;           // row in RunModel::ranks
  Index source = kNone;     // Thread/Ranges: thread row (kNone: no known thread); Stream: stream row
  std::uint32_t stack = 0;  // which of the source's stacked lanes, 0 = the first
  std::string label;
  std::vector<std::int64_t> start, end;  // aligned ns, by start, not overlapping
  std::vector<Index> item;               // row in the table of itemTableOf(kind)
  std::vector<VisualKind> visual;        // colour family of each item
  LaneLod lod;

  std::size_t size() const { return item.size(); }
  ItemRef ref(std::size_t pos) const { return {run, itemTableOf(kind), item[pos]}; }
  std::size_t bytes() const;
};

enum class GroupKind : std::uint8_t { Run = 0, Host = 1, Rank = 2 };

struct LaneGroup {
  GroupKind kind = GroupKind::Rank;
  std::uint32_t run = 0;
  Index rank = kNone;                   // Rank groups: row in RunModel::ranks
  std::string label;
  int parent = -1;                      // index of the enclosing group, -1 for a run
  std::vector<std::uint32_t> children;  // groups inside (Run, Host)
  std::vector<std::uint32_t> lanes;     // lanes inside (Rank)
};

// The lanes of one run, indices local to it.
struct RunLanes {
  std::vector<LaneGroup> groups;  // groups[0] is the run
  std::vector<Lane> lanes;
  std::size_t bytes() const;
};

// Lanes and groups of `model`, each lane with its LOD summaries; ranks are laid out in parallel
// on Qt's global thread pool (call it off the UI thread).
RunLanes buildLanes(const analyzer::RunModel& model, std::uint32_t run, const std::string& run_label);

// First-fit stacking: the stacked lane of each item (items ordered by start, longer first on
// ties) such that items on one stacked lane never overlap.
std::vector<std::uint32_t> stackItems(std::span<const std::int64_t> start, std::span<const std::int64_t> end);

}  // namespace syncopate::gui

Q_DECLARE_METATYPE(syncopate::gui::ItemRef)  // carried by the views' signals
