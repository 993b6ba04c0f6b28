// A synthetic data-parallel training run written as run stores: the analyzer's scale benchmarks
// (bench/analyzer/run_benchmarks.sh, bench/analyzer/scale_out.sh) and the distributed analysis
// test use it.
//
// Every rank runs the same iterations: ~94% compute kernels of a training step, gradient
// all-reduce buckets on an NCCL stream that start as backward produces them, then optimizer
// copies that wait (event record -> stream wait) for the last bucket. Each op is launched by an
// API call on the rank's main thread, which runs ahead of the GPU and synchronises at the end of
// each ProfilerStep#N range. All ranks' all-reduces are one communicator's calls.
// Rank 13 computes 5% slower (a straggler); each host's realtime clock is off by up to 30 us
// (for clock alignment to find). Everything is a deterministic function of the shape.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>

#include "syncopate/trace/status.hpp"

namespace syncopate::synthetic {

inline constexpr int kOpsPerIteration = 1000;  // per rank

struct SyntheticRunShape {
  std::int64_t ops = 10'000'000;  // in all, rounded down to whole iterations (at least one)
  int ranks = 64;
  int ranks_per_host = 8;         // consecutive ranks share a host
  // Each rank's first step also waits, on the GPU and on the host, for an event recorded before
  // the recording began (a job profiled from a later step): a stream wait and an event sync
  // whose record is not in the recording.
  bool waits_on_earlier_event = false;
};

// Iterations per rank that `shape` asks for.
std::int64_t syntheticIterations(const SyntheticRunShape& shape);

// Writes rank-<R>.sqlite for every rank into `dir`; `progress`, when set, is told how many ranks
// are written after each one.
trace::Status writeSyntheticRun(const std::filesystem::path& dir, const SyntheticRunShape& shape,
                                const std::function<void(int written)>& progress = {});

}  // namespace syncopate::synthetic
