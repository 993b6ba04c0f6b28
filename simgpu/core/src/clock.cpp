#include "clock.hpp"

#include <sys/prctl.h>
#include <time.h>

namespace simgpu {

TimeNs nowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<TimeNs>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

namespace detail {

WakeLatency& wakeLatency() {
  static WakeLatency latency;
  return latency;
}

void useExactTimers() { prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); }

}  // namespace detail
}  // namespace simgpu
