// Which training framework a run shows, and what of its settings the run itself shows
// (docs/tuner.md, "Frameworks a run shows"): for a PyTorch profile or a recording alike, from the
// names of its host ranges and what its collectives were.
//   - PyTorch DDP: `DistributedDataParallel.forward` ranges; its buckets are the all-reduces a
//     step launches after its forward ends (DDP reduces each bucket as backward fills it), in
//     launch order, and they bound its bucket_cap_mb (DDP closes a bucket once it holds the cap
//     or more, so every bucket but the first, which may be capped apart, and the last, what was
//     left, holds at least the cap), and whether their first bucket was set apart (the cap unset);
//   - PyTorch FSDP (`FullyShardedDataParallel` ranges), Megatron-LM and DeepSpeed (ranges or
//     kernels whose names carry theirs): named, with the evidence, and no setting read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::tuner {

struct FrameworkSetting {
  std::string name;   // "buckets per step", "bucket_cap_mb"
  std::string value;  // as the run shows it
};

struct DetectedFramework {
  std::string name;      // "PyTorch DDP", "PyTorch FSDP", "Megatron-LM", "DeepSpeed"
  std::string evidence;  // what in the run says so, in words
  std::vector<FrameworkSetting> settings;
  std::vector<std::uint64_t> bucket_bytes;  // DDP: one step's buckets in launch order (rank row 0)
};

std::vector<DetectedFramework> detectFrameworks(const analyzer::RunModel& model, const analyzer::Analysis& analysis);

}  // namespace syncopate::tuner
