#include "syncopate/analyzer/collectives.hpp"

#include <algorithm>

namespace syncopate::analyzer {

std::int64_t ncclTestsBytes(trace::CollType type, std::int64_t count, trace::DataType dtype, std::int32_t n) {
  const std::int64_t size = trace::dataTypeSize(dtype);
  if (count < 0 || size == 0) return kUnknown;
  switch (type) {
    case trace::CollType::AllGather:
    case trace::CollType::ReduceScatter:
    case trace::CollType::Gather:
    case trace::CollType::Scatter:
    case trace::CollType::AllToAll: return n > 0 ? count * size * n : kUnknown;
    case trace::CollType::Barrier:
    case trace::CollType::Unknown: return kUnknown;
    default: return count * size;
  }
}

double busBandwidthFactor(trace::CollType type, std::int32_t n) {
  if (n <= 0) return 0;
  const double nd = n;
  switch (type) {
    case trace::CollType::AllReduce: return 2.0 * (nd - 1) / nd;
    case trace::CollType::ReduceScatter:
    case trace::CollType::AllGather:
    case trace::CollType::Gather:
    case trace::CollType::Scatter:
    case trace::CollType::AllToAll: return (nd - 1) / nd;
    case trace::CollType::Broadcast:
    case trace::CollType::Reduce:
    case trace::CollType::Send:
    case trace::CollType::Recv: return 1.0;
    case trace::CollType::Barrier:
    case trace::CollType::Unknown: return 0;
  }
  return 0;
}

CollectiveAnalysis analyzeCollectives(const RunModel& m) {
  CollectiveAnalysis out;
  out.ranks.resize(m.ranks.size());
  const auto& c = m.collectives;
  out.calls.reserve(m.matches.size());
  for (Index k = 0; k < m.matches.size(); ++k) {
    const auto parts = m.matches.of(k);
    CollectiveTiming t;
    t.match = k;
    t.complete = m.matches.complete(k);
    t.ranks = static_cast<std::int32_t>(parts.size());
    (t.complete ? out.complete : out.partial) += 1;
    t.first_arrival = INT64_MAX;
    t.last_arrival = INT64_MIN;
    std::int64_t second = INT64_MIN;
    Index last_rank = kNone;
    for (Index row : parts) {
      const Index op = c.op[row];
      const std::int64_t arrival = m.ops.start[op];
      t.first_arrival = std::min(t.first_arrival, arrival);
      if (arrival > t.last_arrival) {
        second = t.last_arrival;
        t.last_arrival = arrival;
        last_rank = m.rankOfOp(op);
      } else {
        second = std::max(second, arrival);
      }
      t.end = std::max(t.end, m.ops.end[op]);
    }
    t.arrival_skew_ns = t.last_arrival - t.first_arrival;
    std::int64_t duration_sum = 0;
    for (Index row : parts) {
      const Index op = c.op[row];
      const Index rank = m.rankOfOp(op);
      const std::int64_t wait = t.last_arrival - m.ops.start[op];
      t.wait_ns += wait;
      out.ranks[rank].wait_ns += wait;
      ++out.ranks[rank].collectives;
      duration_sum += m.ops.end[op] - t.last_arrival;
    }
    t.time_ns = std::max<std::int64_t>(0, duration_sum / static_cast<std::int64_t>(parts.size()));
    if (parts.size() > 1 && t.last_arrival > second) {
      t.straggler = last_rank;
      t.lateness_ns = t.last_arrival - second;
      if (t.complete) {
        auto& s = out.ranks[last_rank];
        ++s.times_last;
        s.lateness_ns += t.lateness_ns;
        s.wait_caused_ns += t.wait_ns;
      }
    }
    // Size and bandwidth, from the first participant's description.
    const Index row0 = parts[0];
    const std::int32_t n = m.matches.expected[k] > 0 ? m.matches.expected[k] : t.ranks;
    const trace::CollType type = c.coll_type[row0];
    t.bytes = ncclTestsBytes(type, c.count[row0], c.dtype[row0], n);
    if (t.bytes == kUnknown && type != trace::CollType::Barrier) t.bytes = c.bytes[row0];
    if (t.bytes > 0 && t.time_ns > 0) {
      t.algbw_gbps = static_cast<double>(t.bytes) / static_cast<double>(t.time_ns);  // bytes/ns = GB/s
      t.busbw_gbps = t.algbw_gbps * busBandwidthFactor(type, n);
    }
    out.calls.push_back(t);
  }
  return out;
}

}  // namespace syncopate::analyzer
