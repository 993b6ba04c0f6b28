// Which timing backend a process uses, and why (the reason goes into the store's meta and the
// run's meta.json). auto: CUPTI when it loads and enables, else CUDA events. cupti: the same,
// but falling back is reported as a warning. events: CUDA events.
#pragma once

#include <memory>
#include <string>

#include "syncopate/collector/recorder_config.hpp"
#include "syncopate/collector/timing_backend.hpp"

namespace syncopate::preload {

struct BackendSelection {
  std::unique_ptr<TimingBackend> backend;
  std::string reason;
};

BackendSelection selectTimingBackend(const RecorderConfig& config);

}  // namespace syncopate::preload
