#include "syncopate/gui/model/links.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace syncopate::gui {

std::optional<CollectiveLink> collectiveLink(const TimelineModel& timeline, std::uint32_t run, Index op) {
  if (run >= timeline.runCount()) return std::nullopt;
  const auto& m = timeline.run(run).model;
  if (op >= m.ops.size()) return std::nullopt;
  const Index row = m.collectiveOf(op);
  if (row == kNone) return std::nullopt;
  const Index match = m.collectives.match[row];
  if (match == kNone) return std::nullopt;

  CollectiveLink link;
  link.run = run;
  link.match = match;
  link.type = m.matches.coll_type[match];
  link.comm_id = m.matches.comm_id[match];
  link.seq = m.matches.seq[match];
  link.expected = m.matches.expected[match];
  link.complete = m.matches.complete(match);
  if (const analyzer::Analysis* a = timeline.analysis(run); a && match < a->collectives.calls.size()) {
    link.timing = a->collectives.calls[match];
  }
  const std::int64_t offset = timeline.displayOffset(run);
  std::int64_t last_arrival = std::numeric_limits<std::int64_t>::min();
  for (Index c : m.matches.of(match)) last_arrival = std::max(last_arrival, m.ops.start[m.collectives.op[c]]);
  for (Index c : m.matches.of(match)) {
    CollectiveEnd e;
    e.op = m.collectives.op[c];
    e.rank = m.rankOfOp(e.op);
    e.comm_rank = m.collectives.comm_rank[c];
    e.at = timeline.locate({run, ItemTable::Op, e.op});
    e.arrival = m.ops.start[e.op] + offset;
    e.end = m.ops.end[e.op] + offset;
    e.waited_ns = last_arrival - m.ops.start[e.op];
    e.last = link.timing ? link.timing->straggler == e.rank : false;
    link.ends.push_back(e);
  }
  return link;
}

std::optional<ItemRef> launchingCall(const TimelineModel& timeline, const ItemRef& op) {
  if (op.table != ItemTable::Op || op.run >= timeline.runCount()) return std::nullopt;
  const auto& m = timeline.run(op.run).model;
  if (op.index >= m.ops.size()) return std::nullopt;
  const Index call = m.launchOf(op.index);
  if (call == kNone) return std::nullopt;
  return ItemRef{op.run, ItemTable::ApiCall, call};
}

std::vector<ItemRef> launchedOps(const TimelineModel& timeline, const ItemRef& call) {
  std::vector<ItemRef> out;
  if (call.table != ItemTable::ApiCall || call.run >= timeline.runCount()) return out;
  const auto& m = timeline.run(call.run).model;
  if (call.index >= m.api_calls.size()) return out;
  for (const Index op : m.opsLaunchedBy(call.index)) out.push_back({call.run, ItemTable::Op, op});
  return out;
}

}  // namespace syncopate::gui
