#include "syncopate/trace/clock.hpp"

#include <time.h>

namespace syncopate::trace {

namespace {
std::int64_t readNs(clockid_t clock) noexcept {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

std::int64_t monotonicNs() noexcept { return readNs(CLOCK_MONOTONIC); }

std::int64_t realtimeOffsetNs() noexcept {
  // Read MONOTONIC, REALTIME, MONOTONIC and keep the sample whose bracketing monotonic pair
  // is tightest: its midpoint is the best estimate of when REALTIME was read.
  std::int64_t best_gap = -1;
  std::int64_t best_offset = 0;
  for (int i = 0; i < 7; ++i) {
    const std::int64_t before = readNs(CLOCK_MONOTONIC);
    const std::int64_t real = readNs(CLOCK_REALTIME);
    const std::int64_t after = readNs(CLOCK_MONOTONIC);
    const std::int64_t gap = after - before;
    if (best_gap < 0 || gap < best_gap) {
      best_gap = gap;
      best_offset = real - (before + gap / 2);
    }
  }
  return best_offset;
}

}  // namespace syncopate::trace
