// framework_trainer's output lines. They are an interface: its tests and `syncopate compare`
// parse them, so each is one line of `key=value` words after a fixed first word
// (docs/framework_trainer.md, "Output"):
//
//   config name=gpt2-small-8k layers=16 ... mode=naive ... ranks=4 bootstrap=mpi
//   iter=3 phase=measured time_ms=61.284
//   grad_checksum iter=3 value=0123456789abcdef
//   op_counts rank=1 scope=iteration kernels=... memcpys=3 memsets=0 collectives=196
//   memory rank=1 segments=4 segment_mib=1024 peak_allocated_mib=965.3
//   summary mode=naive ranks=4 iterations=8 mean_ms=... gradients=verified
#pragma once

#include "framework_trainer/caching_allocator.hpp"
#include "framework_trainer/op_counts.hpp"
#include "framework_trainer/options.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace framework_trainer {

struct IterationRecord {
  int iteration = 0;
  bool warmup = false;
  double time_ms = 0.0;  // device time from this iteration's start to the next one's
  std::uint64_t checksum = 0;
};

struct RunSummary {
  Options options;
  int ranks = 1;
  BootstrapKind bootstrap = BootstrapKind::Single;
  std::int64_t params = 0;
  int param_tensors = 0;
  int buckets = 0;  // ddp and zero1 modes; fsdp: its units
  std::vector<IterationRecord> iterations;
};

std::string configLine(const RunSummary& run);
std::string iterationLine(const IterationRecord& record);
std::string countsLine(int rank, const char* scope, const OpCounts& counts);
std::string memoryLine(int rank, const CachingAllocator::Stats& stats);
std::string summaryLine(const RunSummary& run);

}  // namespace framework_trainer
