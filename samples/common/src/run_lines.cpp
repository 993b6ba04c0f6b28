#include "sample_common/run_lines.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sample_common {

std::string checksumLine(int iteration, std::uint64_t checksum) {
  return fmt::format("grad_checksum iter={} value={:016x}", iteration, checksum);
}

TimeStats timeStats(std::vector<double> times) {
  TimeStats stats;
  if (times.empty()) return stats;
  std::sort(times.begin(), times.end());
  double sum = 0;
  for (double t : times) sum += t;
  stats.mean_ms = sum / static_cast<double>(times.size());
  const std::size_t mid = times.size() / 2;
  stats.median_ms = times.size() % 2 == 1 ? times[mid] : (times[mid - 1] + times[mid]) / 2.0;
  stats.min_ms = times.front();
  stats.max_ms = times.back();
  return stats;
}

}  // namespace sample_common
