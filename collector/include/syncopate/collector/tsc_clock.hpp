// CLOCK_MONOTONIC read from the CPU's time-stamp counter: the collector's timestamps at a
// third of a vDSO clock_gettime's cost (docs/collector.md, "The host clock").
//
// Where the kernel itself keeps time with the TSC (clock source `tsc`: invariant, and checked
// synchronised across cores), CLOCK_MONOTONIC is a linear function of the counter that the
// kernel re-tunes (NTP) a little at a time. The background thread measures that function
// (anchors: a clock_gettime between two counter readings) and publishes a line; a reading is
// then one RDTSC and the line, no system call and no vDSO's sequence of loads and fences.
//
// The line is continuous: each anchor keeps the time the current line gives at that instant and
// bends the slope so that the error the anchor found is worked off over the next kSlewNs, so a
// reader sees no step when a line replaces another. An anchor further off than kMaxSlewErrorNs
// (the kernel's clock slewed faster than 5%) withdraws the line until a new baseline is
// measured: readers take the system clock meanwhile, and see the step the kernel's clock made. A
// reading further than kValidNs from the line's anchor (the background thread held up) is refused
// and the caller reads the system clock instead, so a stale line is never extrapolated.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

namespace syncopate::preload {

// A 64 x 64 bit product needs 128 bits (GCC's and Clang's extension; one multiply on x86-64).
__extension__ typedef __int128 Wide;

// time_ns = base_ns + (ticks - base_ticks) * slope_q32 / 2^32 within valid_ticks of base_ticks.
struct TscLine {
  std::uint64_t base_ticks = 0;
  std::int64_t base_ns = 0;
  std::uint64_t slope_q32 = 0;    // nanoseconds per tick, times 2^32
  std::uint64_t valid_ticks = 0;  // 0: no line

  std::int64_t at(std::uint64_t ticks) const noexcept {
    const auto delta = static_cast<std::int64_t>(ticks - base_ticks);
    const Wide scaled = static_cast<Wide>(delta) * static_cast<Wide>(slope_q32);
    return base_ns + static_cast<std::int64_t>(scaled >> 32);
  }
  // Within valid_ticks of base_ticks, before or after it (-valid_ticks <= delta < valid_ticks).
  bool covers(std::uint64_t ticks) const noexcept { return ticks - base_ticks + valid_ticks < 2 * valid_ticks; }
};

// One measurement: the counter and CLOCK_MONOTONIC at the same instant (the counter's reading
// is the middle of two taken around the clock's).
struct TscAnchor {
  std::uint64_t ticks = 0;
  std::int64_t ns = 0;
};

// Turns anchors into lines (plain logic, fed by the background thread; unit-tested alone).
class TscCalibrator {
 public:
  static constexpr std::int64_t kMinBaselineNs = 10'000'000;    // the first line's slope
  static constexpr std::int64_t kBaselineNs = 100'000'000;      // slopes from 100-200 ms of history
  static constexpr std::int64_t kSlewNs = 20'000'000;           // an error is worked off in this
  static constexpr std::int64_t kMaxSlewErrorNs = 1'000'000;    // more than this: a new line
  static constexpr std::int64_t kValidNs = 100'000'000;         // a line serves this far

  // The line to publish after `anchor` (the one now published is `current`, if any): nothing
  // while the anchors span less than kMinBaselineNs, TscLine{} (no line: readers take the system
  // clock) when the anchor was too far off `current` to be worked off.
  std::optional<TscLine> next(TscAnchor anchor, const std::optional<TscLine>& current) noexcept;

  // Forgets every anchor (the clock source changed: the next line starts afresh).
  void reset() noexcept;

 private:
  std::optional<TscAnchor> origin_;       // the slope is measured from here
  std::optional<TscAnchor> next_origin_;  // the origin once the baseline passes 2 kBaselineNs
};

// The published line: one writer (the background thread), readers on every thread, a
// sequence count so that a reader never uses half of an old line and half of a new one
// (a reader that meets a line being written is told no, and reads the system clock).
class TscClock {
 public:
  constexpr TscClock() noexcept = default;

  // The values are read with acquire, so the second look at the count comes after them; a value
  // a writer stored (with release, after making the count odd) makes that look see the change.
  // No fences: plain loads and stores on x86, and what ThreadSanitizer can follow.
  bool read(std::uint64_t ticks, std::int64_t& ns) const noexcept {
    const std::uint32_t before = sequence_.load(std::memory_order_acquire);
    TscLine line;
    line.base_ticks = base_ticks_.load(std::memory_order_acquire);
    line.base_ns = base_ns_.load(std::memory_order_acquire);
    line.slope_q32 = slope_q32_.load(std::memory_order_acquire);
    line.valid_ticks = valid_ticks_.load(std::memory_order_acquire);
    if ((before & 1u) != 0 || sequence_.load(std::memory_order_relaxed) != before) return false;
    if (line.valid_ticks == 0 || !line.covers(ticks)) return false;
    ns = line.at(ticks);
    return true;
  }

  // A line, or none (TscLine{}: every reading refused).
  void publish(const TscLine& line) noexcept {
    // Even, also in a child forked while its parent published (the count it inherited is odd).
    const std::uint32_t sequence = sequence_.load(std::memory_order_relaxed) & ~1u;
    sequence_.store(sequence + 1, std::memory_order_relaxed);
    base_ticks_.store(line.base_ticks, std::memory_order_release);
    base_ns_.store(line.base_ns, std::memory_order_release);
    slope_q32_.store(line.slope_q32, std::memory_order_release);
    valid_ticks_.store(line.valid_ticks, std::memory_order_release);
    sequence_.store(sequence + 2, std::memory_order_release);
  }

 private:
  std::atomic<std::uint32_t> sequence_{0};
  std::atomic<std::uint64_t> base_ticks_{0};
  std::atomic<std::int64_t> base_ns_{0};
  std::atomic<std::uint64_t> slope_q32_{0};
  std::atomic<std::uint64_t> valid_ticks_{0};
};

}  // namespace syncopate::preload
