#include "syncopate/gui/model/lanes.hpp"

#include <QtConcurrent/QtConcurrentMap>

#include <algorithm>
#include <map>
#include <numeric>

namespace syncopate::gui {

using analyzer::RunModel;

std::string_view toString(LaneKind k) {
  switch (k) {
    case LaneKind::Thread: return "thread";
    case LaneKind::Ranges: return "ranges";
    case LaneKind::Stream: return "stream";
    case LaneKind::HostSyncs: return "host syncs";
  }
  return "?";
}

ItemTable itemTableOf(LaneKind k) {
  switch (k) {
    case LaneKind::Thread: return ItemTable::ApiCall;
    case LaneKind::Ranges: return ItemTable::Range;
    case LaneKind::Stream: return ItemTable::Op;
    case LaneKind::HostSyncs: return ItemTable::HostSync;
  }
  return ItemTable::Op;
}

std::size_t Lane::bytes() const {
  return sizeof(Lane) + label.capacity() + start.capacity() * 8 + end.capacity() * 8 + item.capacity() * 4 +
         visual.capacity() + lod.bytes();
}

std::size_t RunLanes::bytes() const {
  std::size_t b = groups.capacity() * sizeof(LaneGroup);
  for (const Lane& l : lanes) b += l.bytes();
  return b;
}

std::vector<std::uint32_t> stackItems(std::span<const std::int64_t> start, std::span<const std::int64_t> end) {
  std::vector<std::uint32_t> row(start.size());
  std::vector<std::int64_t> row_end;  // end of the last item placed on each stacked lane
  for (std::size_t i = 0; i < start.size(); ++i) {
    std::uint32_t r = 0;
    while (r < row_end.size() && row_end[r] > start[i]) ++r;
    if (r == row_end.size()) row_end.push_back(end[i]);
    row_end[r] = end[i];
    row[i] = r;
  }
  return row;
}

namespace {

// Items of one source (rows of one table) in display order, split over stacked lanes.
struct SourceItems {
  std::vector<Index> rows;  // ordered by start, longer first on ties
  std::vector<VisualKind> kinds;
};

// What the extra stacked lanes of a source are called: short, so that the number stays visible.
std::string stackedName(LaneKind kind) {
  switch (kind) {
    case LaneKind::Thread: return "API calls";
    case LaneKind::Ranges: return "NVTX";
    case LaneKind::Stream: return "ops";
    case LaneKind::HostSyncs: return "host syncs";
  }
  return {};
}

void addStackedLanes(std::vector<Lane>& out, const Lane& prototype, SourceItems items,
                     const std::vector<std::int64_t>& table_start, const std::vector<std::int64_t>& table_end) {
  if (items.rows.empty()) return;
  std::vector<std::int64_t> s(items.rows.size()), e(items.rows.size());
  for (std::size_t i = 0; i < items.rows.size(); ++i) {
    s[i] = table_start[items.rows[i]];
    e[i] = std::max(table_end[items.rows[i]], s[i]);  // a negative duration is drawn as a point
  }
  const std::vector<std::uint32_t> stack = stackItems(s, e);
  const std::uint32_t lanes = *std::max_element(stack.begin(), stack.end()) + 1;
  const std::size_t first_lane = out.size();
  for (std::uint32_t k = 0; k < lanes; ++k) {
    Lane lane = prototype;
    lane.stack = k;
    if (k > 0) lane.label = "  " + stackedName(prototype.kind) + " [" + std::to_string(k + 1) + "]";
    out.push_back(std::move(lane));
  }
  for (std::size_t i = 0; i < items.rows.size(); ++i) {
    Lane& lane = out[first_lane + stack[i]];
    lane.start.push_back(s[i]);
    lane.end.push_back(e[i]);
    lane.item.push_back(items.rows[i]);
    lane.visual.push_back(items.kinds[i]);
  }
}

// Rows [first, first+count) ordered by (start, longer first).
std::vector<Index> byStart(Index first, Index count, const std::vector<std::int64_t>& start,
                           const std::vector<std::int64_t>& end) {
  std::vector<Index> rows(count);
  std::iota(rows.begin(), rows.end(), first);
  auto before = [&](Index a, Index b) { return start[a] != start[b] ? start[a] < start[b] : end[a] > end[b]; };
  // The model keeps each stream's ops and each thread's calls by start already.
  if (!std::is_sorted(rows.begin(), rows.end(), before)) std::stable_sort(rows.begin(), rows.end(), before);
  return rows;
}

std::string threadLabel(const RunModel& m, Index thread) {
  const auto& t = m.threads[thread];
  std::string name(m.str(t.name));
  const std::string tid = std::to_string(t.tid);
  if (name.empty()) return "thread " + tid;
  return name.find(tid) != std::string::npos ? name : name + " (" + tid + ")";
}

std::string streamLabel(const RunModel& m, Index stream) {
  const auto& s = m.streams[stream];
  std::string name(m.str(s.name));
  if (name.empty()) name = "stream " + std::to_string(s.handle);
  return name + " · dev " + std::to_string(s.device);
}

std::string rankLabel(const RunModel& m, Index rank) {
  const auto& r = m.ranks[rank];
  std::string label = r.rank >= 0 ? "rank " + std::to_string(r.rank) : "process";
  if (r.pid >= 0) label += " · pid " + std::to_string(r.pid);
  return label;
}

// The lanes of one rank, in display order.
std::vector<Lane> rankLanes(const RunModel& m, Index rank, std::uint32_t run, const std::vector<bool>& call_is_sync) {
  std::vector<Lane> out;
  const auto& info = m.ranks[rank];
  Lane proto;
  proto.run = run;
  proto.rank = rank;

  // NVTX ranges of this rank, by thread (kNone last).
  std::map<Index, std::vector<Index>> ranges_by_thread;
  for (Index r = info.first_range; r < info.first_range + info.range_count; ++r)
    ranges_by_thread[m.ranges.thread[r]].push_back(r);
  auto rangeItems = [&](std::vector<Index> rows) {
    std::stable_sort(rows.begin(), rows.end(), [&](Index a, Index b) {
      return m.ranges.start[a] != m.ranges.start[b] ? m.ranges.start[a] < m.ranges.start[b]
                                                    : m.ranges.end[a] > m.ranges.end[b];
    });
    SourceItems items;
    items.kinds.assign(rows.size(), VisualKind::Range);
    items.rows = std::move(rows);
    return items;
  };

  for (Index t = info.first_thread; t < info.first_thread + info.thread_count; ++t) {
    const auto& th = m.threads[t];
    SourceItems calls;
    calls.rows = byStart(th.first_call, th.call_count, m.api_calls.start, m.api_calls.end);
    calls.kinds.reserve(calls.rows.size());
    for (Index c : calls.rows) {
      VisualKind k = VisualKind::HostCall;
      if (call_is_sync[c]) k = VisualKind::Sync;
      else if (m.api_calls.domain[c] == trace::ApiDomain::Nccl) k = VisualKind::NcclCall;
      else if (m.api_calls.domain[c] == trace::ApiDomain::Nvtx) k = VisualKind::Range;
      calls.kinds.push_back(k);
    }
    proto.kind = LaneKind::Thread;
    proto.source = t;
    proto.label = threadLabel(m, t);
    addStackedLanes(out, proto, std::move(calls), m.api_calls.start, m.api_calls.end);
    auto it = ranges_by_thread.find(t);
    if (it != ranges_by_thread.end()) {
      proto.kind = LaneKind::Ranges;
      proto.label = "NVTX · " + threadLabel(m, t);
      addStackedLanes(out, proto, rangeItems(std::move(it->second)), m.ranges.start, m.ranges.end);
      ranges_by_thread.erase(it);
    }
  }
  // Ranges whose thread is not known, or names a thread row of no call (kept, never dropped).
  for (auto& [thread, rows] : ranges_by_thread) {
    proto.kind = LaneKind::Ranges;
    proto.source = thread;
    proto.label = thread == kNone ? std::string("NVTX") : "NVTX · " + threadLabel(m, thread);
    addStackedLanes(out, proto, rangeItems(std::move(rows)), m.ranges.start, m.ranges.end);
  }

  SourceItems orphan_syncs;
  for (Index s = info.first_host_sync; s < info.first_host_sync + info.host_sync_count; ++s) {
    if (m.host_syncs.api_call[s] != kNone) continue;
    orphan_syncs.rows.push_back(s);
    orphan_syncs.kinds.push_back(VisualKind::Sync);
  }
  proto.kind = LaneKind::HostSyncs;
  proto.source = kNone;
  proto.label = "host syncs";
  addStackedLanes(out, proto, std::move(orphan_syncs), m.host_syncs.start, m.host_syncs.end);

  for (Index s = info.first_stream; s < info.first_stream + info.stream_count; ++s) {
    const auto& st = m.streams[s];
    SourceItems ops;
    ops.rows = byStart(st.first_op, st.op_count, m.ops.start, m.ops.end);
    ops.kinds.reserve(ops.rows.size());
    for (Index o : ops.rows) ops.kinds.push_back(visualKindOf(m.ops.op_class[o]));
    proto.kind = LaneKind::Stream;
    proto.source = s;
    proto.label = streamLabel(m, s);
    addStackedLanes(out, proto, std::move(ops), m.ops.start, m.ops.end);
  }
  for (Lane& lane : out) lane.lod = LaneLod::build(lane.start, lane.end, lane.visual);
  return out;
}

}  // namespace

RunLanes buildLanes(const RunModel& m, std::uint32_t run, const std::string& run_label) {
  RunLanes out;
  std::vector<bool> call_is_sync(m.api_calls.size(), false);
  for (std::size_t s = 0; s < m.host_syncs.size(); ++s)
    if (m.host_syncs.api_call[s] != kNone) call_is_sync[m.host_syncs.api_call[s]] = true;

  out.groups.push_back({GroupKind::Run, run, kNone, run_label, -1, {}, {}});
  // Hosts in the order of their lowest rank (ranks are sorted by rank number).
  std::map<std::string, std::uint32_t> host_group;
  for (Index r = 0; r < m.ranks.size(); ++r) {
    const std::string host = m.ranks[r].host.empty() ? std::string("unknown host") : m.ranks[r].host;
    auto [it, added] = host_group.try_emplace(host, 0);
    if (added) {
      it->second = static_cast<std::uint32_t>(out.groups.size());
      out.groups[0].children.push_back(it->second);
      out.groups.push_back({GroupKind::Host, run, kNone, host, 0, {}, {}});
    }
    const auto rank_group = static_cast<std::uint32_t>(out.groups.size());
    out.groups[it->second].children.push_back(rank_group);
    out.groups.push_back({GroupKind::Rank, run, r, rankLabel(m, r), static_cast<int>(it->second), {}, {}});
  }
  // Each rank's lanes (and their summaries) on the pool, then numbered in rank order.
  std::vector<Index> ranks(m.ranks.size());
  std::iota(ranks.begin(), ranks.end(), Index{0});
  std::vector<std::vector<Lane>> per_rank(m.ranks.size());
  QtConcurrent::blockingMap(ranks, [&](Index r) { per_rank[r] = rankLanes(m, r, run, call_is_sync); });
  for (LaneGroup& g : out.groups) {
    if (g.kind != GroupKind::Rank) continue;
    for (Lane& lane : per_rank[g.rank]) {
      g.lanes.push_back(static_cast<std::uint32_t>(out.lanes.size()));
      out.lanes.push_back(std::move(lane));
    }
  }
  return out;
}

}  // namespace syncopate::gui
