#include "runtime_report.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "syncopate/dispatch/log.hpp"
#include "syncopate/trace/json_text.hpp"

namespace syncopate::preload {

void writeRuntimeReport(const RuntimeReport& report) noexcept {
  const char* dir = std::getenv("SYNCOPATE_OUTPUT_DIR");
  if (dir == nullptr || *dir == '\0') return;
  try {
    nlohmann::json j;
    j["plan"] = report.plan_path;
    j["checksum"] = report.checksum;
    j["rank"] = report.rank;
    j["applied"] = report.applied;
    j["disabled_reason"] = report.disabled_reason;
    if (report.scheduling) {
      const tuner::SchedulerStats& s = report.scheduling->stats;
      j["stats"] = {{"calls", s.calls},
                    {"held", s.held},
                    {"planned_groups", s.planned_groups},
                    {"unplanned_groups", s.unplanned_groups},
                    {"kept_groups", s.kept_groups},
                    {"units", s.units},
                    {"producer_waits", s.producer_waits},
                    {"position_waits", s.position_waits},
                    {"deferred_waits", s.deferred_waits},
                    {"joins", s.joins},
                    {"buffers_merged", s.buffers_merged},
                    {"buffers_retired", s.buffers_retired},
                    {"launches", s.launches},
                    {"barrier_launches", s.barrier_launches},
                    {"agreements", report.scheduling->agreements}};
      // Apart from the counters, which are the same on every rank (invariant 1): this is timing.
      j["agreement_ms"] = {{"total", report.scheduling->agreement_total_ms},
                           {"max", report.scheduling->agreement_max_ms}};
    }
    nlohmann::json fallbacks = nlohmann::json::object();
    for (int i = 0; i < tuner::kFallbackCount; ++i) {
      const auto why = static_cast<tuner::Fallback>(i);
      const std::uint64_t n = report.fallbacks[static_cast<std::size_t>(i)];
      if (n > 0) fallbacks[std::string(tuner::toString(why))] = {{"count", n}, {"why", tuner::describe(why)}};
    }
    j["fallbacks"] = fallbacks;
    j["watchdog"] =
        report.watchdog_message != nullptr ? nlohmann::json(report.watchdog_message) : nlohmann::json(nullptr);
    const std::string name = report.rank >= 0 ? fmt::format("runtime-rank-{}.json", report.rank)
                                              : fmt::format("runtime-pid-{}.json", getpid());
    std::ofstream out(std::string(dir) + "/" + name, std::ios::trunc);
    out << trace::jsonText(j, 2) << "\n";
  } catch (...) {
    log(LogLevel::Warn, "runtime: could not write the runtime report");
  }
}

}  // namespace syncopate::preload
