// What each rank's runtime leaves in the run directory at exit, or when it stops the rank:
// DIR/runtime-rank-<R>.json (docs/tuner.md, "Reports"), read by `syncopate compare` and the GUI.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "syncopate/tuner/scheduler.hpp"

namespace syncopate::preload {

struct RuntimeReport {
  std::string plan_path;
  std::string checksum;        // the plan's, in hex; empty when no plan was read
  int rank = -1;
  bool applied = false;        // the plan was still applied at the end
  std::string disabled_reason;
  // The scheduler's counters (the same on every rank, invariant 1) and what agreeing cost the
  // host (timing: not the same); absent when no scheduler ever ran.
  struct Scheduling {
    tuner::SchedulerStats stats;
    std::uint64_t agreements = 0;
    double agreement_total_ms = 0, agreement_max_ms = 0;
  };
  std::optional<Scheduling> scheduling;
  std::array<std::uint64_t, tuner::kFallbackCount> fallbacks{};  // by tuner::Fallback
  const char* watchdog_message = nullptr;  // why the rank was stopped, when it was
};

// Writes the report into SYNCOPATE_OUTPUT_DIR (nothing without one); says so once if it cannot.
void writeRuntimeReport(const RuntimeReport& report) noexcept;

}  // namespace syncopate::preload
