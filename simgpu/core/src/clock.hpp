// CLOCK_MONOTONIC as simgpu's one clock, and its bridge to std::chrono waits.
#pragma once

#include <simgpu/core/stream_op.hpp>

#include <atomic>
#include <chrono>

namespace simgpu::detail {

inline std::chrono::steady_clock::time_point toTimePoint(TimeNs t) {
  // libstdc++'s steady_clock is CLOCK_MONOTONIC, the clock nowNs() reads.
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(t));
}

// How late a timed wait wakes up on this machine at the moment, learnt from the waits
// themselves: sleeps towards a modelled end stop that much early (twice the estimate) and
// spin the rest, so the end is met precisely while spinning costs only what the machine's
// jitter requires.
class WakeLatency {
 public:
  TimeNs spinWindow() const {
    const TimeNs window = 2 * estimate_.load(std::memory_order_relaxed);
    return window < kMinWindow ? kMinWindow : (window > kMaxWindow ? kMaxWindow : window);
  }
  // A timed wait meant to end at `target` returned at `now`.
  void observe(TimeNs target, TimeNs now) {
    const TimeNs late = now - target;
    if (late < 0) return;
    const TimeNs old = estimate_.load(std::memory_order_relaxed);
    estimate_.store(old + (late - old) / 16, std::memory_order_relaxed);  // a racy EWMA is fine
  }

 private:
  static constexpr TimeNs kMinWindow = 10'000;
  static constexpr TimeNs kMaxWindow = 200'000;  // bounded: spinning must not feed the load it measures
  std::atomic<TimeNs> estimate_{20'000};
};

WakeLatency& wakeLatency();

// Worker threads ask the kernel for exact timer expiry (the default slack is 50 us, which
// would be most of a short op's duration).
void useExactTimers();

}  // namespace simgpu::detail
