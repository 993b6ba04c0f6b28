// Timestamps of the collector: nanoseconds on CLOCK_MONOTONIC (the store's clock), read without
// a system call. Where the kernel keeps time with the TSC, from the counter and the line the
// background thread calibrates (syncopate/collector/tsc_clock.hpp); elsewhere, and until the
// first line, through the vDSO.
#pragma once

#include <cstdint>
#include <ctime>

#include "syncopate/collector/tsc_clock.hpp"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace syncopate::preload {

// The line every thread reads; written by calibrateHostClock() alone.
inline constinit TscClock host_tsc_clock;

inline std::int64_t systemMonotonicNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline std::int64_t monotonicNs() noexcept {
#if defined(__x86_64__)
  std::int64_t ns = 0;
  if (host_tsc_clock.read(__rdtsc(), ns)) return ns;
#endif
  return systemMonotonicNs();
}

inline std::int64_t realtimeNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Measures the counter against CLOCK_MONOTONIC and publishes the next line (the background
// thread, every pass; cold). Publishes none where the clock source is not `tsc` (with
// SYNCOPATE_HOST_CLOCK=tsc: where the processor's counter is not invariant), on other
// processors, or with SYNCOPATE_HOST_CLOCK=system. Returns whether readings now use the counter.
bool calibrateHostClock() noexcept;

}  // namespace syncopate::preload
