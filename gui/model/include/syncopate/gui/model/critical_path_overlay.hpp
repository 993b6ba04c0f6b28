// The analyzer's critical path of an iteration, placed on the timeline: each segment on the
// lane of the op, API call or host sync it was spent on, in display time, so the view can
// outline them and join consecutive segments across lanes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "syncopate/analyzer/critical_path.hpp"
#include "syncopate/gui/model/timeline_model.hpp"

namespace syncopate::gui {

struct PathMark {
  std::optional<std::uint32_t> lane;  // absent when the node is on no lane
  Index rank = 0;                     // rank row
  std::int64_t start = 0, end = 0;    // display ns
  analyzer::PathCategory category = analyzer::PathCategory::Idle;
  Index straggler = kNone;            // StragglerWait: the rank row everyone waited for
};

// The path of iteration `number` of run `run` (nullopt before the analysis is ready or when
// the run has no such iteration).
std::optional<std::vector<PathMark>> criticalPathMarks(const TimelineModel& timeline, std::uint32_t run,
                                                       std::int64_t number);

// The item a path node is drawn as: ops and API calls as themselves, a host sync as the API
// call that blocked (or itself when it has none).
ItemRef itemOfNode(std::uint32_t run, const analyzer::RunModel& model, analyzer::NodeRef node);

}  // namespace syncopate::gui
