#include "syncopate/gui/model/critical_path_overlay.hpp"

namespace syncopate::gui {

ItemRef itemOfNode(std::uint32_t run, const analyzer::RunModel& model, analyzer::NodeRef node) {
  switch (node.kind()) {
    case analyzer::NodeRef::Kind::Op: return {run, ItemTable::Op, node.index()};
    case analyzer::NodeRef::Kind::ApiCall: return {run, ItemTable::ApiCall, node.index()};
    case analyzer::NodeRef::Kind::HostSync: {
      const Index call = node.index() < model.host_syncs.size() ? model.host_syncs.api_call[node.index()] : kNone;
      return call != kNone ? ItemRef{run, ItemTable::ApiCall, call} : ItemRef{run, ItemTable::HostSync, node.index()};
    }
  }
  return {};
}

std::optional<std::vector<PathMark>> criticalPathMarks(const TimelineModel& timeline, std::uint32_t run,
                                                       std::int64_t number) {
  const analyzer::Analysis* a = timeline.analysis(run);
  if (!a) return std::nullopt;
  const analyzer::CriticalPath* path = nullptr;
  for (const auto& p : a->critical_paths)
    if (p.iteration == number) path = &p;
  if (!path) return std::nullopt;
  const auto& m = timeline.run(run).model;
  const std::int64_t offset = timeline.displayOffset(run);
  std::vector<PathMark> marks;
  marks.reserve(path->segments.size());
  for (const analyzer::PathSegment& s : path->segments) {
    PathMark mark;
    if (auto at = timeline.locate(itemOfNode(run, m, s.node))) mark.lane = at->lane;
    mark.rank = s.rank;
    mark.start = s.start + offset;
    mark.end = s.end + offset;
    mark.category = s.category;
    mark.straggler = s.straggler;
    marks.push_back(mark);
  }
  return marks;
}

}  // namespace syncopate::gui
