#include "syncopate/gui/model/units.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace syncopate::gui {

namespace {

struct Unit {
  double scale;
  const char* name;
};

// The unit whose value of `ns` is at least 1 (ns for anything smaller).
Unit unitFor(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return {1e9, "s"};
  if (a >= 1e6) return {1e6, "ms"};
  if (a >= 1e3) return {1e3, "µs"};
  return {1, "ns"};
}

// `value` with `decimals` decimals, a space and `unit`.
std::string withUnit(double value, const char* unit, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, value, unit);
  return buf;
}

}  // namespace

std::string formatDuration(std::int64_t ns, int significant) {
  if (significant < 1) significant = 1;
  const Unit u = unitFor(static_cast<double>(ns));
  const double v = static_cast<double>(ns) / u.scale;
  if (u.scale == 1) return withUnit(v, u.name, 0);
  // Digits before the point: 1..3 (values below 1000 of the chosen unit; seconds may exceed).
  const double a = std::fabs(v);
  const int before = a >= 100 ? 3 : a >= 10 ? 2 : 1;
  const int decimals = significant > before ? significant - before : 0;
  return withUnit(v, u.name, decimals);
}

std::string formatTimeLabel(std::int64_t ns, std::int64_t step_ns) {
  const Unit u = unitFor(static_cast<double>(step_ns > 0 ? step_ns : 1));
  // Decimals needed to show the step itself in that unit: a step of 2.5 ms needs one.
  int decimals = 0;
  for (double step = static_cast<double>(step_ns) / u.scale; decimals < 9; ++decimals, step *= 10) {
    if (std::fabs(step - std::round(step)) < 1e-6) break;
  }
  return withUnit(static_cast<double>(ns) / u.scale, u.name, decimals);
}

std::string formatBytes(std::int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (std::llabs(bytes) < 1024) return withUnit(b, "B", 0);
  if (std::llabs(bytes) < (1LL << 20)) return withUnit(b / 1024.0, "KiB", 2);
  if (std::llabs(bytes) < (1LL << 30)) return withUnit(b / (1024.0 * 1024.0), "MiB", 2);
  return withUnit(b / (1024.0 * 1024.0 * 1024.0), "GiB", 2);
}

}  // namespace syncopate::gui
