#include "syncopate/gui/model/time_axis.hpp"

#include <algorithm>
#include <cmath>

namespace syncopate::gui {

void TimeAxis::setWidth(double pixels) {
  width_ = std::max(1.0, pixels);
}

void TimeAxis::setBounds(std::int64_t begin, std::int64_t end) {
  bounds_begin_ = begin;
  bounds_end_ = std::max(end, begin + kMinSpanNs);
  clamp();
}

void TimeAxis::setWindow(double start, double end) {
  start_ = start;
  end_ = end;
  clamp();
}

void TimeAxis::clamp() {
  const double bounds = static_cast<double>(bounds_end_ - bounds_begin_);
  const double max_span = bounds * 1.2;
  double span = std::clamp(end_ - start_, static_cast<double>(kMinSpanNs), max_span);
  const double centre = (start_ + end_) / 2;
  start_ = centre - span / 2;
  end_ = centre + span / 2;
  // Keep at least a tenth of the window over the data, so the data cannot be panned out of sight.
  const double keep = span / 10;
  const double lo = static_cast<double>(bounds_begin_) - span + keep;
  const double hi = static_cast<double>(bounds_end_) - keep;
  if (start_ < lo) start_ = lo;
  if (start_ > hi) start_ = hi;
  end_ = start_ + span;
}

void TimeAxis::zoomAt(double x, double factor) {
  if (!(factor > 0)) return;
  const double anchor = toTime(x);
  const double span = this->span() / factor;
  const double frac = x / width_;
  start_ = anchor - frac * span;
  end_ = start_ + span;
  // Clamping may move the window when a limit is reached; keep the anchor if the span allows.
  const double clamped_span = std::clamp(span, static_cast<double>(kMinSpanNs),
                                         static_cast<double>(bounds_end_ - bounds_begin_) * 1.2);
  if (clamped_span != span) {
    start_ = anchor - frac * clamped_span;
    end_ = start_ + clamped_span;
  }
  clamp();
}

void TimeAxis::panPixels(double pixels) {
  const double dt = pixels * nsPerPixel();
  start_ += dt;
  end_ += dt;
  clamp();
}

void TimeAxis::fit(std::int64_t a, std::int64_t b, double margin) {
  if (b < a) std::swap(a, b);
  const double len = std::max<double>(static_cast<double>(b - a), kMinSpanNs);
  const double m = len * margin;
  setWindow(static_cast<double>(a) - m, static_cast<double>(a) + len + m);
}

Ruler makeRuler(const TimeAxis& axis, std::int64_t origin, double min_major_px) {
  Ruler r;
  r.origin = origin;
  const double min_step = min_major_px * axis.nsPerPixel();
  // The smallest 1-2-5 x 10^k step (in whole ns) at least min_step long.
  std::int64_t step = 1;
  int mantissa = 1;
  while (static_cast<double>(step) < min_step) {
    if (mantissa == 1) {
      step *= 2, mantissa = 2;
    } else if (mantissa == 2) {
      step = step / 2 * 5, mantissa = 5;
    } else {
      step *= 2, mantissa = 1;
    }
  }
  r.major_step_ns = step;
  const int minors = mantissa == 2 ? 4 : 5;
  const std::int64_t minor = std::max<std::int64_t>(1, step / minors);
  // First minor tick at or after the window start, on the grid anchored at origin.
  const auto rel_start = static_cast<std::int64_t>(std::floor(axis.start())) - origin;
  std::int64_t k = rel_start >= 0 ? rel_start / minor : -((-rel_start + minor - 1) / minor);
  for (std::int64_t t = origin + k * minor; static_cast<double>(t) <= axis.end(); t += minor) {
    if (static_cast<double>(t) < axis.start()) continue;
    const std::int64_t rel = t - origin;
    r.ticks.push_back({t, rel % step == 0});
  }
  return r;
}

}  // namespace syncopate::gui
