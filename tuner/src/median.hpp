// The median of a sample, shared by the fits and the comparison of runs.
#pragma once

#include <algorithm>
#include <vector>

namespace syncopate::tuner {

// The middle value (the mean of the two middle ones for an even count); 0 for no values.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace syncopate::tuner
