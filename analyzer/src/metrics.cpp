#include "syncopate/analyzer/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

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

std::vector<KernelTally> kernelTallies(const RunModel& m, Index rank, const IntervalSet& windows) {
  std::vector<KernelTally> out;
  // Names are dense ids; the rank's own names are few, so a map from id to slot stays small.
  std::unordered_map<StringId, std::size_t> slot;
  const RankInfo& info = m.ranks[rank];
  for (Index op = info.first_op; op < info.first_op + info.op_count; ++op) {
    if (m.ops.op_class[op] == OpClass::Marker || !windows.contains(m.ops.start[op])) continue;
    const std::int64_t d = m.ops.end[op] - m.ops.start[op];
    auto [it, added] = slot.try_emplace(m.ops.name[op], out.size());
    if (added) out.push_back({m.ops.name[op], m.ops.op_class[op], 0, 0, d, d, 0, 1});
    KernelTally& t = out[it->second];
    ++t.count;
    t.total_ns += d;
    t.min_ns = std::min(t.min_ns, d);
    t.max_ns = std::max(t.max_ns, d);
    const auto magnitude = static_cast<std::uint64_t>(d < 0 ? -d : d);
    t.sum_sq += static_cast<SquareSum>(magnitude) * magnitude;
  }
  return out;
}

void KernelTallySum::add(const std::vector<KernelTally>& rank_tallies) {
  for (const KernelTally& t : rank_tallies) {
    if (t.name >= slot_.size()) slot_.resize(static_cast<std::size_t>(t.name) + 1, 0);
    if (slot_[t.name] == 0) {
      tallies_.push_back(t);
      slot_[t.name] = static_cast<std::uint32_t>(tallies_.size());
      continue;
    }
    KernelTally& sum = tallies_[slot_[t.name] - 1];
    sum.count += t.count;
    sum.total_ns += t.total_ns;
    sum.min_ns = std::min(sum.min_ns, t.min_ns);
    sum.max_ns = std::max(sum.max_ns, t.max_ns);
    sum.sum_sq += t.sum_sq;
    sum.ranks += t.ranks;
  }
}

namespace {

// Sample standard deviation, as pandas' std() that HTA reports: sqrt((n·Q − T²) / (n(n − 1)))
// from the exact sums (T² < 2¹²⁶ always fits; n·Q ≥ T², Cauchy–Schwarz, so the
// difference is exact too).
double sampleStddev(const KernelTally& t) {
  if (t.count < 2) return 0.0;
  const auto n = static_cast<SquareSum>(t.count);
  const auto total = static_cast<SquareSum>(t.total_ns < 0 ? -t.total_ns : t.total_ns);
  SquareSum nq = 0;
  if (__builtin_mul_overflow(n, t.sum_sq, &nq)) {
    // Beyond 128 bits (sums of squares of durations of hours): the same formula in long double.
    const long double mean = static_cast<long double>(t.total_ns) / static_cast<long double>(t.count);
    const long double var = (static_cast<long double>(t.sum_sq) - static_cast<long double>(t.count) * mean * mean) /
                            static_cast<long double>(t.count - 1);
    return static_cast<double>(std::sqrt(std::max(0.0L, var)));
  }
  const SquareSum numerator = nq - total * total;
  return std::sqrt(static_cast<double>(numerator) / (static_cast<double>(t.count) * static_cast<double>(t.count - 1)));
}

}  // namespace

std::vector<KernelStat> KernelTallySum::stats(const StringTable& names) const {
  std::vector<KernelStat> out;
  out.reserve(tallies_.size());
  for (const KernelTally& t : tallies_) {
    KernelStat k;
    k.name = t.name;
    k.op_class = t.op_class;
    k.count = t.count;
    k.total_ns = t.total_ns;
    k.min_ns = t.min_ns;
    k.max_ns = t.max_ns;
    k.mean_ns = static_cast<double>(t.total_ns) / static_cast<double>(t.count);
    k.stddev_ns = sampleStddev(t);
    k.ranks = t.ranks;
    out.push_back(k);
  }
  std::sort(out.begin(), out.end(), [&](const KernelStat& a, const KernelStat& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : names[a.name] < names[b.name];
  });
  return out;
}

std::vector<KernelStat> kernelStats(const RunModel& m, const std::vector<IntervalSet>& windows) {
  KernelTallySum sum;
  for (Index r = 0; r < m.ranks.size(); ++r) sum.add(kernelTallies(m, r, windows[r]));
  return sum.stats(m.strings);
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
