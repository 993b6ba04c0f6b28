#include "syncopate/gui/model/time_axis.hpp"

#include <algorithm>
#include <cmath>

namespace syncopate::gui {

void TimeAxis::setWidth(double pixels) {
  width_ = std::max(1.0, pixels);
}

void TimeAxis::setBounds(std::int64_t begin, std::int64_t end) {
  // Keep the window where it is in absolute time while the origin moves.
  const double shift = static_cast<double>(begin - origin_);
  start_ -= shift;
  end_ -= shift;
  origin_ = begin;
  bounds_length_ = std::max(end - begin, kMinSpanNs);
  clamp();
}

void TimeAxis::setWindow(std::int64_t start, std::int64_t end) {
  start_ = static_cast<double>(start - origin_);
  end_ = static_cast<double>(end - origin_);
  clamp();
}

std::int64_t TimeAxis::startNs() const {
  return origin_ + static_cast<std::int64_t>(std::floor(start_));
}

std::int64_t TimeAxis::endNs() const {
  return origin_ + static_cast<std::int64_t>(std::ceil(end_));
}

std::int64_t TimeAxis::toTime(double x) const {
  return origin_ + static_cast<std::int64_t>(std::floor(start_ + x / width_ * span()));
}

void TimeAxis::clamp() {
  const double bounds = static_cast<double>(bounds_length_);
  const double span = std::clamp(end_ - start_, static_cast<double>(kMinSpanNs), bounds * 1.2);
  const double centre = (start_ + end_) / 2;
  start_ = centre - span / 2;
  // Keep at least a tenth of the window over the data, so the data cannot be panned out of sight.
  const double keep = span / 10;
  start_ = std::clamp(start_, -span + keep, bounds - keep);
  end_ = start_ + span;
}

void TimeAxis::zoomAt(double x, double factor) {
  if (!(factor > 0)) return;
  const double anchor = start_ + x / width_ * span();
  const double span = std::clamp(this->span() / factor, static_cast<double>(kMinSpanNs),
                                 static_cast<double>(bounds_length_) * 1.2);
  start_ = anchor - x / width_ * span;
  end_ = start_ + span;
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
  start_ = static_cast<double>(a - origin_) - m;
  end_ = static_cast<double>(a - origin_) + len + m;
  clamp();
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
  const std::int64_t start = axis.startNs(), end = axis.endNs();
  const std::int64_t rel_start = start - origin;
  const std::int64_t k = rel_start >= 0 ? (rel_start + minor - 1) / minor : -((-rel_start) / minor);
  for (std::int64_t t = origin + k * minor; t <= end; t += minor) r.ticks.push_back({t, (t - origin) % step == 0});
  return r;
}

}  // namespace syncopate::gui
