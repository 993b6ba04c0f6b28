// What the what-if model learns from the run itself (docs/tuner.md, "Fits"):
//   - interference: how much slower compute runs while communication runs on the same device,
//     and the reverse, from ops of one kind that ran both alone and overlapped;
//   - per communicator, a latency/bandwidth fit of collective times,
//       t = latency * steps(type, n) + seconds_per_byte * busbw_factor(type, n) * S
//     (S and the bus bandwidth factor as nccl-tests defines them; steps as NCCL's ring
//     algorithm takes them: 2(n-1) for all-reduce, n-1 for the others, 1 for send/recv),
//     where t is the time a call took once its last rank arrived, interference removed;
//   - each op's standalone duration (its measured duration with interference removed);
//   - the launch latency (how soon after its launch call an op can start) and the bandwidth
//     of device-to-device copies (for fusion-buffer copies).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::tuner {

struct InterferenceEstimate {
  double slowdown = 0;      // ops run (1 + slowdown) times slower while overlapped
  bool measured = false;    // false: not measurable in this run, `slowdown` is the prior
  std::int64_t samples = 0; // overlapped ops the estimate rests on
};

struct Interference {
  InterferenceEstimate compute, communication;
};

// Priors used when the run shows no overlap to measure (docs/tuner.md says where they come from).
inline constexpr double kPriorComputeSlowdown = 0.10;
inline constexpr double kPriorCommunicationSlowdown = 0.15;

Interference measureInterference(const analyzer::RunModel& model, const analyzer::Analysis& analysis,
                                 double prior_compute = kPriorComputeSlowdown,
                                 double prior_communication = kPriorCommunicationSlowdown);

struct CommFit {
  std::int64_t comm_id = 0;
  double latency_ns = 0;          // per ring step
  double ns_per_byte = 0;         // per bus byte
  bool latency_identified = false;  // false: one kind of call only, latency taken as 0
  std::int64_t samples = 0;
  double rms_relative_error = 0;  // of the fit over its samples
};

class CommModel {
 public:
  std::vector<CommFit> fits;

  const CommFit* find(std::int64_t comm_id) const;
  // Modelled time of a call once every rank has arrived; negative when the communicator has
  // no fit.
  double durationNs(std::int64_t comm_id, trace::CollType type, std::int32_t ranks, std::uint64_t count,
                    trace::DataType dtype) const;
};

int ringSteps(trace::CollType type, std::int32_t ranks);

CommModel fitCommunication(const analyzer::RunModel& model, const analyzer::Analysis& analysis,
                           const Interference& interference);

// Per op of the model: its duration alone. Compute ops lose the slowdown of the time they
// overlapped communication; collectives count from their last rank's arrival and lose theirs;
// other ops keep their measured duration.
std::vector<double> standaloneDurations(const analyzer::RunModel& model, const analyzer::Analysis& analysis,
                                        const Interference& interference);

struct HostTimings {
  double launch_latency_ns = 0;     // the least time from a launch call to its op's start
  double copy_bytes_per_ns = 0;     // device-to-device copies; 0 when the run has none
  double copy_latency_ns = 0;       // fixed cost of one copy
};
HostTimings measureHostTimings(const analyzer::RunModel& model);

// Used when the run has no device-to-device copy to measure (an HBM-class device).
inline constexpr double kDefaultCopyBytesPerNs = 1000.0;  // 1 TB/s

}  // namespace syncopate::tuner
