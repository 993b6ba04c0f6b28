#include "syncopate/analyzer/phase_timings.hpp"

#include <sys/resource.h>

#include <ctime>

namespace syncopate::analyzer {

namespace {
double seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double peakRssMib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}
}  // namespace

void PhaseTimings::start(std::string name) {
  stop();
  phases_.push_back({std::move(name), 0, 0});
  running_ = true;
  wall0_ = seconds(CLOCK_MONOTONIC);
  cpu0_ = seconds(CLOCK_PROCESS_CPUTIME_ID);
}

void PhaseTimings::stop() {
  if (!running_) return;
  phases_.back().wall_s = seconds(CLOCK_MONOTONIC) - wall0_;
  phases_.back().cpu_s = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0_;
  phases_.back().peak_rss_mib = peakRssMib();
  running_ = false;
}

}  // namespace syncopate::analyzer
