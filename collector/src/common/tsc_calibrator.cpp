#include <cmath>
#include <cstdlib>

#include "syncopate/collector/tsc_clock.hpp"

namespace syncopate::preload {

std::optional<TscLine> TscCalibrator::next(TscAnchor anchor, const std::optional<TscLine>& current) noexcept {
  // A counter or clock that went back (a restored virtual machine, a counter reset) ends the
  // history: slopes across it would be nonsense.
  if (!origin_ || anchor.ticks <= origin_->ticks || anchor.ns <= origin_->ns) {
    reset();
    origin_ = anchor;
    return std::nullopt;
  }
  const std::int64_t span_ns = anchor.ns - origin_->ns;
  if (span_ns < kMinBaselineNs) return std::nullopt;
  const double ns_per_tick = static_cast<double>(span_ns) / static_cast<double>(anchor.ticks - origin_->ticks);
  if (!next_origin_ && span_ns >= kBaselineNs) {
    next_origin_ = anchor;
  } else if (next_origin_ && span_ns >= 2 * kBaselineNs) {
    origin_ = next_origin_;
    next_origin_.reset();
  }

  TscLine line;
  line.base_ticks = anchor.ticks;
  line.base_ns = anchor.ns;
  line.valid_ticks = static_cast<std::uint64_t>(static_cast<double>(kValidNs) / ns_per_tick);
  double slope = ns_per_tick;
  if (current && current->valid_ticks != 0 && current->covers(anchor.ticks)) {
    const std::int64_t on_line = current->at(anchor.ticks);
    const std::int64_t error = anchor.ns - on_line;
    if (std::llabs(error) > kMaxSlewErrorNs) {
      // The clock moved away from the counter faster than a line can follow: no line, and a
      // slope measured afresh from here.
      reset();
      origin_ = anchor;
      return TscLine{};
    }
    // Continuous: the new line starts where the old one is, and runs a little faster or slower
    // until the error is gone.
    line.base_ns = on_line;
    slope *= 1.0 + static_cast<double>(error) / static_cast<double>(kSlewNs);
  }
  line.slope_q32 = static_cast<std::uint64_t>(std::llround(std::ldexp(slope, 32)));
  return line;
}

void TscCalibrator::reset() noexcept {
  origin_.reset();
  next_origin_.reset();
}

}  // namespace syncopate::preload
