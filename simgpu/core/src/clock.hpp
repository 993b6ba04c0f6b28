// CLOCK_MONOTONIC as simgpu's one clock, and its bridge to std::chrono waits.
#pragma once

#include <simgpu/core/stream_op.hpp>

#include <chrono>

namespace simgpu::detail {

inline std::chrono::steady_clock::time_point toTimePoint(TimeNs t) {
  // libstdc++'s steady_clock is CLOCK_MONOTONIC, the clock nowNs() reads.
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(t));
}

// Worker threads ask the kernel for exact timer expiry (the default slack is 50 us, which
// would be most of a short op's duration).
void useExactTimers();

}  // namespace simgpu::detail
