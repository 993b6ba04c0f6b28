// Output both sample trainers share, parsed by tests and by `syncopate compare`: the gradient
// checksum line and the statistics of the measured iteration times.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sample_common {

// grad_checksum iter=<n> value=<16 hex digits>: equal values at every iteration mean
// bit-identical gradients (`syncopate compare` reads these lines).
std::string checksumLine(int iteration, std::uint64_t checksum);

struct TimeStats {
  double mean_ms = 0, median_ms = 0, min_ms = 0, max_ms = 0;
};
// All zero for no times.
TimeStats timeStats(std::vector<double> times_ms);

}  // namespace sample_common
