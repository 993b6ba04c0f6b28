// The order in which a rank's host issued its GPU ops: by the start of the launching API call,
// or by the op's own start when the launch was not recorded.
#pragma once

#include <algorithm>
#include <numeric>
#include <vector>

#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::analyzer {

inline std::int64_t issueTime(const RunModel& m, Index op) {
  const Index call = m.ops.launch[op];
  return call == kNone ? m.ops.start[op] : m.api_calls.start[call];
}

// Ops of `rank` in issue order; `issued` (if given) receives their issue times in that order.
// Each stream's ops are usually issued in the order they ran, so the streams are merged rather
// than all sorted.
inline std::vector<Index> issueOrder(const RunModel& m, Index rank, std::vector<std::int64_t>* issued = nullptr) {
  const RankInfo& r = m.ranks[rank];
  std::vector<std::pair<std::int64_t, Index>> keyed(r.op_count);
  for (Index k = 0; k < r.op_count; ++k) keyed[k] = {issueTime(m, r.first_op + k), r.first_op + k};
  bool runs_sorted = true;
  for (Index s = r.first_stream; s < r.first_stream + r.stream_count && runs_sorted; ++s) {
    const auto begin = keyed.begin() + (m.streams[s].first_op - r.first_op);
    runs_sorted = std::is_sorted(begin, begin + m.streams[s].op_count);
  }
  if (runs_sorted) {
    for (Index s = r.first_stream + 1; s < r.first_stream + r.stream_count; ++s) {
      const auto begin = keyed.begin(), middle = begin + (m.streams[s].first_op - r.first_op);
      std::inplace_merge(begin, middle, middle + m.streams[s].op_count);
    }
  } else {
    // Keys are unique (they carry the op), so this is std::sort's order; a merge sort is cheaper
    // on ops that are in order but for a few, where introsort falls back to heapsort.
    std::stable_sort(keyed.begin(), keyed.end());
  }
  std::vector<Index> order(r.op_count);
  if (issued) issued->resize(r.op_count);
  for (Index k = 0; k < r.op_count; ++k) {
    order[k] = keyed[k].second;
    if (issued) (*issued)[k] = keyed[k].first;
  }
  return order;
}

}  // namespace syncopate::analyzer
