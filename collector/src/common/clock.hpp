// Timestamps of the collector: nanoseconds on CLOCK_MONOTONIC (the store's clock). Read through
// the vDSO: no system call on the hot path.
#pragma once

#include <cstdint>
#include <ctime>

namespace syncopate::preload {

inline std::int64_t monotonicNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline std::int64_t realtimeNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace syncopate::preload
