#include <cstdio>
#include <cstring>

#include "common/clock.hpp"
#include "syncopate/collector/recorder_config.hpp"

namespace syncopate::preload {
namespace {

#if defined(__x86_64__)
constexpr std::int64_t kClockSourceCheckNs = 1'000'000'000;
constexpr int kAnchorTries = 5;

// The kernel's own choice: only where it keeps CLOCK_MONOTONIC with the TSC has it checked the
// counter invariant and the cores' counters in step (else it would have fallen back to another
// source), and only then is CLOCK_MONOTONIC a line in the counter.
bool kernelClockIsTsc() noexcept {
  std::FILE* file = std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
  if (file == nullptr) return false;
  char name[32] = {};
  const bool read = std::fgets(name, sizeof name, file) != nullptr;
  std::fclose(file);
  return read && std::strcmp(name, "tsc\n") == 0;
}

std::uint64_t orderedTicks() noexcept {
  _mm_lfence();
  return __rdtsc();
}

// The tightest of a few tries: the clock was read somewhere between the two counter readings.
TscAnchor measureAnchor() noexcept {
  TscAnchor best;
  std::uint64_t best_width = ~std::uint64_t{0};
  for (int attempt = 0; attempt < kAnchorTries; ++attempt) {
    const std::uint64_t before = orderedTicks();
    const std::int64_t ns = systemMonotonicNs();
    const std::uint64_t after = orderedTicks();
    if (after - before < best_width) {
      best_width = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  return best;
}

// The background thread's alone (no lock: a child forked while one was held would never get it).
struct Calibration {
  TscCalibrator calibrator;
  std::optional<TscLine> current;
  bool tsc = false;
  std::int64_t next_source_check_ns = 0;
};
#endif

}  // namespace

bool calibrateHostClock() noexcept {
#if defined(__x86_64__)
  if (recorderConfig().system_clock) return false;
  static Calibration calibration;
  const std::int64_t now = systemMonotonicNs();
  if (now >= calibration.next_source_check_ns) {
    calibration.next_source_check_ns = now + kClockSourceCheckNs;
    calibration.tsc = kernelClockIsTsc();
    if (!calibration.tsc && calibration.current) {
      host_tsc_clock.publish(TscLine{});
      calibration.current.reset();
      calibration.calibrator.reset();
    }
  }
  if (!calibration.tsc) return false;
  if (std::optional<TscLine> line = calibration.calibrator.next(measureAnchor(), calibration.current)) {
    host_tsc_clock.publish(*line);
    calibration.current = line->valid_ticks != 0 ? line : std::nullopt;
  }
  return calibration.current.has_value();
#else
  return false;
#endif
}

}  // namespace syncopate::preload
