#include "least_squares.hpp"

#include <cmath>

namespace syncopate::tuner {

namespace {
// Below this, the two regressors are taken as proportional (1 - cos^2 of their angle).
constexpr double kCollinear = 1e-9;

double rmsRelative(const std::vector<LinearSample>& samples, double a, double b) {
  double sum = 0;
  int n = 0;
  for (const LinearSample& s : samples) {
    if (s.y <= 0) continue;
    const double e = (a * s.x1 + b * s.x2 - s.y) / s.y;
    sum += e * e;
    ++n;
  }
  return n > 0 ? std::sqrt(sum / n) : 0.0;
}
}  // namespace

LinearFit fitNonNegative(const std::vector<LinearSample>& samples) {
  double s11 = 0, s12 = 0, s22 = 0, t1 = 0, t2 = 0;
  for (const LinearSample& s : samples) {
    s11 += s.x1 * s.x1;
    s12 += s.x1 * s.x2;
    s22 += s.x2 * s.x2;
    t1 += s.x1 * s.y;
    t2 += s.x2 * s.y;
  }
  LinearFit f;
  const double det = s11 * s22 - s12 * s12;
  if (s11 > 0 && s22 > 0 && det / (s11 * s22) > kCollinear) {
    const double a = (t1 * s22 - t2 * s12) / det;
    const double b = (t2 * s11 - t1 * s12) / det;
    if (a >= 0 && b >= 0) {
      f.ok = true;
      f.a = a;
      f.b = b;
      f.both_identified = true;
      f.rms_relative_error = rmsRelative(samples, a, b);
      return f;
    }
  }
  // One coefficient: per byte if there are bytes, else a fixed cost.
  if (s22 > 0 && t2 > 0) {
    f.ok = true;
    f.b = t2 / s22;
  } else if (s11 > 0 && t1 > 0) {
    f.ok = true;
    f.a = t1 / s11;
  }
  f.rms_relative_error = rmsRelative(samples, f.a, f.b);
  return f;
}

}  // namespace syncopate::tuner
