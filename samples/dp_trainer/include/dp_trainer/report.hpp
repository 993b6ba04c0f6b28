// dp_trainer's output lines. They are an interface: tests, the collector's tests and
// `syncopate compare` parse them, so each is one line of `key=value` words after a fixed
// first word (docs/dp_trainer.md, "Output"):
//
//   config name=gpt-1.3b layers=24 ... mode=naive ... ranks=4 bootstrap=mpi
//   iter=3 phase=measured time_ms=142.812 loss=0.3187
//   grad_checksum iter=3 value=0123456789abcdef
//   op_counts rank=1 scope=iteration kernels=96 memcpys=4 memsets=1 collectives=24
//   summary mode=naive ranks=4 iterations=10 mean_ms=... median_ms=... gradients=verified
#pragma once

#include "dp_trainer/op_counts.hpp"
#include "dp_trainer/options.hpp"
#include "sample_common/run_lines.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dp_trainer {

struct IterationRecord {
  int iteration = 0;
  bool warmup = false;
  double time_ms = 0.0;  // device time from this iteration's start to the next one's
  double loss = 0.0;     // mean of all ranks' losses
  std::uint64_t checksum = 0;
};

struct RunSummary {
  Options options;
  int rank = 0;
  int ranks = 1;
  BootstrapKind bootstrap = BootstrapKind::Single;
  int buckets = 0;  // collectives per iteration in the chosen mode
  std::vector<IterationRecord> iterations;
  OpCounts setup, per_iteration, total;
};

using sample_common::TimeStats;
// Over the measured (non-warm-up) iterations.
TimeStats measuredTimes(const std::vector<IterationRecord>& iterations);

std::string configLine(const RunSummary& run);
std::string iterationLine(const IterationRecord& record);
std::string checksumLine(const IterationRecord& record);
std::string countsLine(int rank, const char* scope, const OpCounts& counts);
std::string summaryLine(const RunSummary& run);
nlohmann::json summaryJson(const RunSummary& run);

}  // namespace dp_trainer
