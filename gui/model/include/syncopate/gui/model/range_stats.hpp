// Statistics of a selected time range, per run on view: how the GPU time of each rank splits
// (the analyzer's interval-union breakdown measured inside the range), ops per kind, and the
// top kernels (the analyzer's kernel statistics over ops that start inside the range).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "syncopate/analyzer/metrics.hpp"
#include "syncopate/gui/model/timeline_model.hpp"

namespace syncopate::gui {

struct KindCount {
  std::int64_t count = 0;
  std::int64_t time_ns = 0;  // summed durations of those ops
};

struct RankRangeStats {
  Index rank = 0;            // row in RunModel::ranks
  std::int32_t rank_number = -1;
  analyzer::TimeBreakdown time;  // inside the range (window = its length)
  std::int64_t ops = 0;          // GPU ops starting inside the range
};

struct TopKernel {
  std::string name;
  analyzer::OpClass op_class = analyzer::OpClass::Compute;
  std::int64_t count = 0, total_ns = 0;
  double mean_ns = 0;
  std::int32_t ranks = 0;
};

struct RunRangeStats {
  std::uint32_t run = 0;
  std::string label;
  std::int64_t start = 0, end = 0;  // the range in the run's aligned time
  // Index: trace::OpKind value (1..8); ops that start inside the range.
  std::array<KindCount, 9> by_kind{};
  std::vector<RankRangeStats> ranks;
  std::vector<TopKernel> top_kernels;  // longest total first
};

struct RangeStatistics {
  std::int64_t start = 0, end = 0;  // display ns
  std::vector<RunRangeStats> runs;
};

// Statistics of display range [start, end) over every run on view (TimelineModel::runsOnView).
RangeStatistics computeRangeStatistics(const std::vector<RunOnView>& runs, std::int64_t start, std::int64_t end,
                                       std::size_t top_kernels = 10);

}  // namespace syncopate::gui
