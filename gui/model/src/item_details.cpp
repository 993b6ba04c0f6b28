#include "syncopate/gui/model/item_details.hpp"

#include "syncopate/gui/model/units.hpp"

namespace syncopate::gui {

namespace {

void addTiming(ItemDetails& d, std::int64_t begin, std::int64_t start, std::int64_t end) {
  d.fields.emplace_back("start", formatDuration(start - begin, 6));
  d.fields.emplace_back("duration", formatDuration(end - start, 4));
}

std::string rankName(const analyzer::RunModel& m, Index rank) {
  const auto& r = m.ranks[rank];
  return r.rank >= 0 ? std::to_string(r.rank) + " on " + r.host : "unknown (pid " + std::to_string(r.pid) + ")";
}

}  // namespace

std::string ItemDetails::value(std::string_view field) const {
  for (const auto& [k, v] : fields)
    if (k == field) return v;
  return {};
}

ItemDetails describeItem(const TimelineModel& timeline, const ItemRef& item) {
  ItemDetails d;
  if (!item.valid() || item.run >= timeline.runCount()) return d;
  const auto& m = timeline.run(item.run).model;
  const std::int64_t begin = timeline.run(item.run).begin_ns;
  switch (item.table) {
    case ItemTable::Op: {
      const Index op = item.index;
      d.title = std::string(m.str(m.ops.name[op]));
      d.fields.emplace_back("kind", std::string(trace::toString(m.ops.kind[op])));
      d.fields.emplace_back("class", std::string(analyzer::toString(m.ops.op_class[op])));
      d.fields.emplace_back("rank", rankName(m, m.rankOfOp(op)));
      const auto& st = m.streams[m.ops.stream[op]];
      d.fields.emplace_back("stream", std::string(m.str(st.name)) + " (handle " + std::to_string(st.handle) +
                                          ", device " + std::to_string(st.device) + ")");
      addTiming(d, begin, m.ops.start[op], m.ops.end[op]);
      if (m.ops.bytes[op] != analyzer::kUnknown) d.fields.emplace_back("bytes", formatBytes(m.ops.bytes[op]));
      if (const Index c = m.collectiveOf(op); c != kNone) {
        const auto& ct = m.collectives;
        d.fields.emplace_back("collective", std::string(trace::toString(ct.coll_type[c])));
        d.fields.emplace_back("communicator", std::to_string(ct.comm_id[c]) + " (rank " +
                                                  std::to_string(ct.comm_rank[c]) + " of " +
                                                  std::to_string(ct.comm_size[c]) + ")");
        d.fields.emplace_back("sequence", std::to_string(ct.seq[c]));
        if (ct.count[c] != analyzer::kUnknown)
          d.fields.emplace_back("count", std::to_string(ct.count[c]) + " × " + std::string(trace::toString(ct.dtype[c])));
        if (ct.root_or_peer[c] >= 0) d.fields.emplace_back("root / peer", std::to_string(ct.root_or_peer[c]));
      }
      if (const Index call = m.launchOf(op); call != kNone) {
        d.fields.emplace_back("launched by", std::string(m.str(m.api_calls.name[call])) + " at " +
                                                 formatDuration(m.api_calls.start[call] - begin, 6));
        d.fields.emplace_back("launch latency", formatDuration(m.ops.start[op] - m.api_calls.start[call], 4));
      }
      break;
    }
    case ItemTable::ApiCall: {
      const Index c = item.index;
      d.title = std::string(m.str(m.api_calls.name[c]));
      d.fields.emplace_back("kind", "API call (" + std::string(trace::toString(m.api_calls.domain[c])) + ")");
      d.fields.emplace_back("rank", rankName(m, m.rankOfCall(c)));
      const auto& th = m.threads[m.api_calls.thread[c]];
      d.fields.emplace_back("thread", std::to_string(th.tid));
      addTiming(d, begin, m.api_calls.start[c], m.api_calls.end[c]);
      const std::size_t launched = m.opsLaunchedBy(c).size();
      if (launched > 0) d.fields.emplace_back("GPU ops launched", std::to_string(launched));
      for (std::size_t s = 0; s < m.host_syncs.size(); ++s) {
        if (m.host_syncs.api_call[s] != c) continue;
        d.fields.emplace_back("blocked on", std::string(trace::toString(m.host_syncs.sync_kind[s])) + " for " +
                                                formatDuration(m.host_syncs.end[s] - m.host_syncs.start[s], 4));
      }
      break;
    }
    case ItemTable::Range: {
      const Index r = item.index;
      d.title = std::string(m.str(m.ranges.name[r]));
      d.fields.emplace_back("kind", "NVTX range");
      if (m.ranges.domain[r] != 0) d.fields.emplace_back("domain", std::string(m.str(m.ranges.domain[r])));
      d.fields.emplace_back("rank", rankName(m, m.ranges.rank[r]));
      d.fields.emplace_back("depth", std::to_string(m.ranges.depth[r]));
      addTiming(d, begin, m.ranges.start[r], m.ranges.end[r]);
      break;
    }
    case ItemTable::HostSync: {
      const Index s = item.index;
      d.title = "host sync";
      d.fields.emplace_back("kind", "host sync on " + std::string(trace::toString(m.host_syncs.sync_kind[s])));
      d.fields.emplace_back("rank", rankName(m, m.host_syncs.rank[s]));
      addTiming(d, begin, m.host_syncs.start[s], m.host_syncs.end[s]);
      break;
    }
  }
  return d;
}

}  // namespace syncopate::gui
