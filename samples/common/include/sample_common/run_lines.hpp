// Output both sample trainers share, parsed by tests and by `syncopate compare`: the start of
// the iteration line, the gradient checksum line, the statistics of the measured iteration times
// and the summary line they end in.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sample_common {

// iter=<n> phase=warmup|measured time_ms=<t>, to which a trainer may add its own words.
std::string iterationLine(int iteration, bool warmup, double time_ms);

// grad_checksum iter=<n> value=<16 hex digits>: equal values at every iteration mean
// bit-identical gradients (`syncopate compare` reads these lines).
std::string checksumLine(int iteration, std::uint64_t checksum);

struct TimeStats {
  double mean_ms = 0, median_ms = 0, min_ms = 0, max_ms = 0;
};
// All zero for no times.
TimeStats timeStats(std::vector<double> times_ms);

// Over the measured (non-warm-up) iterations of a trainer's records (`warmup`, `time_ms`).
template <class IterationRecord>
TimeStats measuredTimes(const std::vector<IterationRecord>& iterations) {
  std::vector<double> times;
  for (const IterationRecord& r : iterations) {
    if (!r.warmup) times.push_back(r.time_ms);
  }
  return timeStats(std::move(times));
}

// summary mode=<m> ranks=<n> iterations=<n> mean_ms=... median_ms=... min_ms=... max_ms=...
// [<more_words>] gradients=verified: the last line of a run whose every gradient was verified.
std::string summaryLine(std::string_view mode, int ranks, int iterations, const TimeStats& measured,
                        std::string_view more_words = {});

}  // namespace sample_common
