// Loading a run directory (every rank-<R>.sqlite / pid-<P>.sqlite in it) into one RunModel,
// with clock alignment applied. Recorded and imported runs load the same way.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string_view>

#include "syncopate/analyzer/clock_alignment.hpp"
#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/phase_timings.hpp"
#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::analyzer {

// Called as loading proceeds: `done` of `total` rows read so far ("what" names the stage).
using ProgressFn = std::function<void(std::string_view what, std::size_t done, std::size_t total)>;

struct LoadOptions {
  ClockAlignmentOptions clock;
  ProgressFn progress;  // may be empty
  PhaseTimings* timings = nullptr;  // when set, the load's phases are timed into it
};

// Fails with a sentence naming the file when the directory holds no store, or a store cannot
// be opened (not a store, unknown schema version, truncated) or is damaged.
trace::Result<RunModel> loadRun(const std::filesystem::path& run_dir, const LoadOptions& options = {});

// Meta keys an importer sets for the window its source trace covers, on the store's clock
// (the writer's own start_ns/end_ns are when the store was written).
inline constexpr std::string_view kTraceStartMetaKey = "trace_start_ns";
inline constexpr std::string_view kTraceEndMetaKey = "trace_end_ns";

}  // namespace syncopate::analyzer
