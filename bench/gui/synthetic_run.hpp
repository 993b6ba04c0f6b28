// A synthetic data-parallel run written through the trace writer, as the collector would
// write it: per rank and iteration a ProfilerStep#N range with forward / backward / optimizer
// ranges inside, a few host-to-device copies, forward and backward kernels on a compute stream
// (each launched by a host API call), gradient all-reduces on an NCCL stream as backward
// produces them, and optimizer kernels. The last rank computes a little slower, so it is the
// straggler of every all-reduce. Deterministic: the same options give the same run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace syncopate::gui::bench {

struct SyntheticRunOptions {
  std::int64_t ops = 1'000'000;  // GPU ops over all ranks (rounded to whole iterations)
  int ranks = 8;
  int ranks_per_host = 4;
};

struct SyntheticRunStats {
  std::int64_t ops = 0, api_calls = 0, ranges = 0, iterations = 0;
};

// Writes the run into `dir` (which must not hold stores yet); false with `error` set on failure.
bool writeSyntheticRun(const std::filesystem::path& dir, const SyntheticRunOptions& options, SyntheticRunStats& stats,
                       std::string& error);

}  // namespace syncopate::gui::bench
