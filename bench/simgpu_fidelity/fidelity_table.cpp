#include "fidelity_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace simgpu::bench {

std::vector<double> relativeErrors(const Series& s) {
  std::vector<double> errors;
  for (double m : s.measured_ns) errors.push_back(std::abs(m - s.modelled_ns) / s.modelled_ns);
  return errors;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = p * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = static_cast<std::size_t>(std::ceil(rank));
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

void printTable(const std::vector<Series>& all) {
  std::printf("| op | how | modelled (us) | measured median (us) | median error | p95 error | samples |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (const Series& s : all) {
    const std::vector<double> errors = relativeErrors(s);
    std::printf("| %s | %s | %.1f | %.1f | %.2f%% | %.2f%% | %zu |\n", s.op.c_str(), s.how.c_str(),
                s.modelled_ns / 1e3, percentile(s.measured_ns, 0.5) / 1e3, 100 * percentile(errors, 0.5),
                100 * percentile(errors, 0.95), s.measured_ns.size());
  }
}

void printSummary(const std::vector<Series>& all, double min_ns) {
  std::vector<std::string> ops;
  for (const Series& s : all)
    if (std::find(ops.begin(), ops.end(), s.op) == ops.end()) ops.push_back(s.op);
  ops.push_back("all ops");
  std::printf("\nops of %.0f us and more:\n", min_ns / 1e3);
  for (const std::string& op : ops) {
    std::vector<double> errors;
    for (const Series& s : all)
      if (s.modelled_ns >= min_ns && (op == "all ops" || s.op == op)) {
        const std::vector<double> e = relativeErrors(s);
        errors.insert(errors.end(), e.begin(), e.end());
      }
    if (errors.empty()) continue;
    std::printf("  %-22s median error %.2f%%, p95 error %.2f%% (%zu samples)\n", op.c_str(),
                100 * percentile(errors, 0.5), 100 * percentile(errors, 0.95), errors.size());
  }
}

}  // namespace simgpu::bench
