// `syncopate export --format chrome`: the run as Chrome/Perfetto trace JSON. One process per
// rank; in it one track per host thread (API calls and NVTX ranges) and one per stream (GPU
// ops); flow arrows from each host launch to its GPU op, from each collective's last arrival
// to the other ranks' ops of that call, and from each send to its receive. With an analysis,
// a "critical path" process shows each iteration's path, segment by segment.
#pragma once

#include <filesystem>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::analyzer {

struct ChromeExportStats {
  std::size_t events = 0, flows = 0;
};

// Timestamps are microseconds since the run's first event (three decimals: nanoseconds kept).
// `analysis` may be null.
trace::Result<ChromeExportStats> exportChromeTrace(const RunModel& model, const Analysis* analysis,
                                                   const std::filesystem::path& file);

}  // namespace syncopate::analyzer
