// The store's clock: every *_ns column is CLOCK_MONOTONIC nanoseconds of the host that wrote
// it; the realtime offset lets the analyzer put several hosts on one axis.
#pragma once

#include <cstdint>

namespace syncopate::trace {

// CLOCK_MONOTONIC now, in nanoseconds.
std::int64_t monotonicNs() noexcept;

// CLOCK_REALTIME - CLOCK_MONOTONIC in nanoseconds, from the tightest of a few back-to-back
// readings (the pair read closest together bounds the error by its own gap).
std::int64_t realtimeOffsetNs() noexcept;

}  // namespace syncopate::trace
