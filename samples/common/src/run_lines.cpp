#include "sample_common/run_lines.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sample_common {

std::string iterationLine(int iteration, bool warmup, double time_ms) {
  return fmt::format("iter={} phase={} time_ms={:.3f}", iteration, warmup ? "warmup" : "measured", time_ms);
}

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

std::string summaryLine(std::string_view mode, int ranks, int iterations, const TimeStats& t,
                        std::string_view more_words) {
  return fmt::format(
      "summary mode={} ranks={} iterations={} mean_ms={:.3f} median_ms={:.3f} min_ms={:.3f} max_ms={:.3f} {}{}"
      "gradients=verified",
      mode, ranks, iterations, t.mean_ms, t.median_ms, t.min_ms, t.max_ms, more_words, more_words.empty() ? "" : " ");
}

}  // namespace sample_common
