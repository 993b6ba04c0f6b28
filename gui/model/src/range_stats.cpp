#include "syncopate/gui/model/range_stats.hpp"

#include <algorithm>

namespace syncopate::gui {

RangeStatistics computeRangeStatistics(const std::vector<RunOnView>& runs, std::int64_t start, std::int64_t end,
                                       std::size_t top_kernels) {
  RangeStatistics out;
  if (end < start) std::swap(start, end);
  out.start = start;
  out.end = end;
  for (std::uint32_t r = 0; r < runs.size(); ++r) {
    const LoadedRun& run = *runs[r].run;
    const auto& m = run.model;
    RunRangeStats s;
    s.run = r;
    s.label = run.label;
    s.start = start - runs[r].offset;
    s.end = end - runs[r].offset;
    std::vector<analyzer::IntervalSet> windows(m.ranks.size(), analyzer::IntervalSet::unionOf({{s.start, s.end}}));
    for (Index rank = 0; rank < m.ranks.size(); ++rank) {
      if (!run.rowsLoaded(rank)) continue;  // a rank of a summary whose rows were not read
      RankRangeStats rs;
      rs.rank = rank;
      rs.rank_number = m.ranks[rank].rank;
      rs.time = analyzer::breakdown(run.activity[rank], s.start, s.end);
      const auto& info = m.ranks[rank];
      for (Index st = info.first_stream; st < info.first_stream + info.stream_count; ++st) {
        // A stream's ops are contiguous and sorted by start.
        const auto first = m.ops.start.begin() + m.streams[st].first_op;
        const auto last = first + m.streams[st].op_count;
        for (auto it = std::lower_bound(first, last, s.start); it != last && *it < s.end; ++it) {
          const auto op = static_cast<Index>(it - m.ops.start.begin());
          KindCount& k = s.by_kind[static_cast<std::size_t>(m.ops.kind[op])];
          ++k.count;
          k.time_ns += m.ops.end[op] - m.ops.start[op];
          ++rs.ops;
        }
      }
      s.ranks.push_back(rs);
    }
    for (const analyzer::KernelStat& k : analyzer::kernelStats(m, windows)) {
      if (s.top_kernels.size() >= top_kernels) break;
      s.top_kernels.push_back({std::string(m.str(k.name)), k.op_class, k.count, k.total_ns, k.mean_ns, k.ranks});
    }
    out.runs.push_back(std::move(s));
  }
  return out;
}

}  // namespace syncopate::gui
