// Samples of modelled versus measured durations, summarised as a table.
#pragma once

#include <string>
#include <vector>

namespace simgpu::bench {

struct Series {
  std::string op;                // e.g. "kernel", "memcpy HtoD"
  std::string how;               // "single" (launch, then sync) or "x10" (ten queued, per op)
  double modelled_ns = 0;        // what the profile says one op takes (launch latency included for single)
  std::vector<double> measured_ns;
};

// Relative error of each sample, |measured - modelled| / modelled.
std::vector<double> relativeErrors(const Series& s);
double percentile(std::vector<double> values, double p);

void printTable(const std::vector<Series>& all);
// Median and p95 relative error over the samples of ops of at least `min_ns` modelled, for
// each op (all ways of running it together) and for all ops.
void printSummary(const std::vector<Series>& all, double min_ns);

}  // namespace simgpu::bench
