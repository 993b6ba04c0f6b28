#include "timing/backend_choice.hpp"

#include "syncopate/dispatch/log.hpp"
#include "timing/cupti_timing.hpp"
#include "timing/event_timing.hpp"

namespace syncopate::preload {

BackendSelection selectTimingBackend(const RecorderConfig& config) {
  BackendSelection selection;
  if (config.backend == BackendChoice::Events) {
    selection.backend = std::make_unique<EventTiming>(config.event_pairs_per_device);
    selection.reason = "requested (--backend events)";
    return selection;
  }
  std::string why;
  if (auto cupti = CuptiTiming::create(why)) {
    selection.backend = std::move(cupti);
    selection.reason = config.backend == BackendChoice::Cupti ? "requested (--backend cupti)" : "CUPTI is available (auto)";
    return selection;
  }
  selection.backend = std::make_unique<EventTiming>(config.event_pairs_per_device);
  if (config.backend == BackendChoice::Cupti) {
    selection.reason = "--backend cupti was requested but " + why + "; fell back to CUDA events";
    log(LogLevel::Warn, "%s", selection.reason.c_str());
  } else {
    selection.reason = why + "; using CUDA events (auto)";
  }
  return selection;
}

}  // namespace syncopate::preload
