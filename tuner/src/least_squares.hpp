// Least squares of y = a * x1 + b * x2 with a, b >= 0: the shape of every "fixed cost plus
// cost per byte" fit of the tuner (collective latency/bandwidth, copy latency/bandwidth).
#pragma once

#include <vector>

namespace syncopate::tuner {

struct LinearSample {
  double x1 = 0, x2 = 0, y = 0;
};

struct LinearFit {
  bool ok = false;
  double a = 0, b = 0;
  // Both coefficients were determined by the data (the samples are not all of one shape).
  // When not, a is 0 and b carries everything: a per-byte cost without a fixed cost.
  bool both_identified = false;
  double rms_relative_error = 0;
};

LinearFit fitNonNegative(const std::vector<LinearSample>& samples);

}  // namespace syncopate::tuner
