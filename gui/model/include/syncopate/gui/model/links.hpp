// What joins items across lanes: the ranks of one collective (with who arrived when, and who
// was late, from the analyzer's collective analysis), and host launch -> GPU op flows, both
// ways. The timeline draws them; the details panel navigates along them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "syncopate/analyzer/collectives.hpp"
#include "syncopate/gui/model/timeline_model.hpp"

namespace syncopate::gui {

struct CollectiveEnd {
  Index op = kNone;                 // row in RunModel::ops
  Index rank = 0;                   // rank row
  std::int32_t comm_rank = -1;
  std::optional<LanePosition> at;   // where it is drawn
  std::int64_t arrival = 0, end = 0;  // display ns (arrival = the op's GPU start)
  std::int64_t waited_ns = 0;       // last arrival - own arrival
  bool last = false;                // this rank arrived last (the straggler)
};

struct CollectiveLink {
  std::uint32_t run = 0;
  Index match = kNone;              // row in RunModel::matches
  trace::CollType type = trace::CollType::Unknown;
  std::int64_t comm_id = 0, seq = 0;
  std::int32_t expected = 0;        // ranks that should take part
  bool complete = false;
  std::vector<CollectiveEnd> ends;  // by comm rank
  // From the analyzer (absent until its analysis is ready).
  std::optional<analyzer::CollectiveTiming> timing;
};

// The collective that op `op` of run `run` takes part in; nullopt for other ops and for
// collectives no other rank's op was matched with.
std::optional<CollectiveLink> collectiveLink(const TimelineModel& timeline, std::uint32_t run, Index op);

// Host launch -> GPU op flows, both ways.
std::optional<ItemRef> launchingCall(const TimelineModel& timeline, const ItemRef& op);
std::vector<ItemRef> launchedOps(const TimelineModel& timeline, const ItemRef& call);

}  // namespace syncopate::gui
