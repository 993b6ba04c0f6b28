#include "syncopate/analyzer/metrics.hpp"

#include <algorithm>
#include <cmath>

namespace syncopate::analyzer {

TimeBreakdown& TimeBreakdown::operator+=(const TimeBreakdown& o) {
  window_ns += o.window_ns;
  compute_ns += o.compute_ns;
  communication_ns += o.communication_ns;
  memory_ns += o.memory_ns;
  overlapped_communication_ns += o.overlapped_communication_ns;
  exposed_communication_ns += o.exposed_communication_ns;
  busy_ns += o.busy_ns;
  idle_ns += o.idle_ns;
  non_compute_ns += o.non_compute_ns;
  for (std::size_t g = 0; g < kCollectiveGroups; ++g) exposed_by_collective_ns[g] += o.exposed_by_collective_ns[g];
  return *this;
}

const char* toString(CollectiveGroup group) {
  switch (group) {
    case CollectiveGroup::AllReduce: return "all_reduce";
    case CollectiveGroup::ReduceScatter: return "reduce_scatter";
    case CollectiveGroup::AllGather: return "all_gather";
    case CollectiveGroup::Other: return "other";
  }
  return "other";
}

CollectiveGroup collectiveGroup(trace::CollType type) {
  switch (type) {
    case trace::CollType::AllReduce: return CollectiveGroup::AllReduce;
    case trace::CollType::ReduceScatter: return CollectiveGroup::ReduceScatter;
    case trace::CollType::AllGather: return CollectiveGroup::AllGather;
    default: return CollectiveGroup::Other;
  }
}

RankActivity rankActivity(const RunModel& m, Index rank) {
  const RankInfo& r = m.ranks[rank];
  std::vector<Interval> compute, comm, memory;
  std::array<std::vector<Interval>, kCollectiveGroups> by_group;
  for (Index op = r.first_op; op < r.first_op + r.op_count; ++op) {
    const Interval iv{m.ops.start[op], m.ops.end[op]};
    switch (m.ops.op_class[op]) {
      case OpClass::Compute: compute.push_back(iv); break;
      case OpClass::Communication: {
        comm.push_back(iv);
        const Index c = m.collectiveOf(op);
        const CollectiveGroup g = c == kNone ? CollectiveGroup::Other : collectiveGroup(m.collectives.coll_type[c]);
        by_group[static_cast<std::size_t>(g)].push_back(iv);
        break;
      }
      case OpClass::Memory: memory.push_back(iv); break;
      case OpClass::Marker: break;
    }
  }
  RankActivity a;
  a.compute = IntervalSet::unionOf(std::move(compute));
  a.communication = IntervalSet::unionOf(std::move(comm));
  a.memory = IntervalSet::unionOf(std::move(memory));
  a.busy = a.compute.unite(a.communication).unite(a.memory);
  a.overlapped = a.communication.intersect(a.compute);
  for (std::size_t g = 0; g < kCollectiveGroups; ++g) {
    a.exposed_by_collective[g] = IntervalSet::unionOf(std::move(by_group[g])).subtract(a.compute);
  }
  return a;
}

TimeBreakdown breakdown(const RankActivity& a, std::int64_t start, std::int64_t end) {
  TimeBreakdown t;
  if (end <= start) return t;
  t.window_ns = end - start;
  t.compute_ns = a.compute.measure(start, end);
  t.communication_ns = a.communication.measure(start, end);
  t.memory_ns = a.memory.measure(start, end);
  t.overlapped_communication_ns = a.overlapped.measure(start, end);
  t.exposed_communication_ns = t.communication_ns - t.overlapped_communication_ns;
  for (std::size_t g = 0; g < kCollectiveGroups; ++g) t.exposed_by_collective_ns[g] = a.exposed_by_collective[g].measure(start, end);
  t.busy_ns = a.busy.measure(start, end);
  t.idle_ns = t.window_ns - t.busy_ns;
  t.non_compute_ns = t.busy_ns - t.compute_ns;
  return t;
}

std::vector<StreamIdle> streamIdle(const RunModel& m, Index rank, const IntervalSet& windows,
                                   std::int64_t threshold) {
  std::vector<StreamIdle> out;
  const RankInfo& r = m.ranks[rank];
  for (Index s = r.first_stream; s < r.first_stream + r.stream_count; ++s) {
    StreamIdle idle;
    idle.stream = s;
    const StreamInfo& st = m.streams[s];
    std::int64_t prev_end = INT64_MIN;
    for (Index op = st.first_op; op < st.first_op + st.op_count; ++op) {
      if (m.ops.op_class[op] == OpClass::Marker || !windows.contains(m.ops.start[op])) continue;
      ++idle.ops;
      idle.busy_ns += m.ops.end[op] - m.ops.start[op];
      if (prev_end != INT64_MIN) {
        const std::int64_t gap = m.ops.start[op] - prev_end;
        if (gap > 0) {
          const Index call = m.ops.launch[op];
          if (call != kNone && m.api_calls.start[call] > prev_end)
            idle.host_wait_ns += gap;
          else if (gap < threshold)
            idle.kernel_wait_ns += gap;
          else
            idle.other_ns += gap;
        }
      }
      prev_end = std::max(prev_end, m.ops.end[op]);
    }
    if (idle.ops > 0) out.push_back(idle);
  }
  return out;
}

std::vector<KernelStat> kernelStats(const RunModel& m, const std::vector<IntervalSet>& windows) {
  struct Acc {
    KernelStat stat;
    double sum_sq = 0;
    Index last_rank = kNone;
  };
  // Names are dense ids, so one slot per name beats a hash map over millions of ops.
  std::vector<Acc> acc(m.strings.size());
  std::vector<bool> seen(m.strings.size(), false);
  for (Index r = 0; r < m.ranks.size(); ++r) {
    const RankInfo& info = m.ranks[r];
    for (Index op = info.first_op; op < info.first_op + info.op_count; ++op) {
      if (m.ops.op_class[op] == OpClass::Marker || !windows[r].contains(m.ops.start[op])) continue;
      const std::int64_t d = m.ops.end[op] - m.ops.start[op];
      Acc& a = acc[m.ops.name[op]];
      const bool added = !seen[m.ops.name[op]];
      seen[m.ops.name[op]] = true;
      if (added) {
        a.stat.name = m.ops.name[op];
        a.stat.op_class = m.ops.op_class[op];
        a.stat.min_ns = a.stat.max_ns = d;
      }
      ++a.stat.count;
      a.stat.total_ns += d;
      a.stat.min_ns = std::min(a.stat.min_ns, d);
      a.stat.max_ns = std::max(a.stat.max_ns, d);
      a.sum_sq += static_cast<double>(d) * static_cast<double>(d);
      if (a.last_rank != r) ++a.stat.ranks, a.last_rank = r;
    }
  }
  std::vector<KernelStat> out;
  for (StringId name = 0; name < acc.size(); ++name) {
    if (!seen[name]) continue;
    Acc& a = acc[name];
    const double n = static_cast<double>(a.stat.count);
    a.stat.mean_ns = static_cast<double>(a.stat.total_ns) / n;
    // Sample standard deviation, as pandas' std() that HTA reports.
    a.stat.stddev_ns = a.stat.count > 1 ? std::sqrt(std::max(0.0, (a.sum_sq - n * a.stat.mean_ns * a.stat.mean_ns) / (n - 1))) : 0.0;
    out.push_back(a.stat);
  }
  std::sort(out.begin(), out.end(), [&](const KernelStat& a, const KernelStat& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : m.str(a.name) < m.str(b.name);
  });
  return out;
}

KernelTypeBreakdown kernelTypeBreakdown(const RankActivity& a, const IntervalSet& windows) {
  KernelTypeBreakdown out{};
  const IntervalSet* sets[] = {&a.compute, &a.communication, &a.memory};
  for (const Interval& w : windows.intervals()) {
    const auto part = overlapBreakdown(sets, w.start, w.end);
    for (std::size_t k = 0; k < out.size(); ++k) out[k] += part[k];
  }
  return out;
}

}  // namespace syncopate::analyzer
