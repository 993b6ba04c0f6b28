// The what-if model: a recorded run, replayable under another gradient synchronisation
// schedule (docs/tuner.md, "The model").
//
// From the run it keeps each rank's calls (recorded_calls.hpp), every op's standalone
// duration, the collective latency/bandwidth fits and the interference factors (fits.hpp).
// To predict a schedule it feeds every rank's calls through the same Scheduler the runtime
// uses, turns the actions into a simulated program (host steps, stream ops, collectives
// matched across ranks) and simulates a window of consecutive steady iterations. With no
// rules it replays the schedule as recorded, and the difference from the measured iteration
// time is the model's error.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/tuner/channels.hpp"
#include "syncopate/tuner/work_queues.hpp"
#include "syncopate/tuner/fits.hpp"
#include "syncopate/tuner/op_pointers.hpp"
#include "syncopate/tuner/recorded_calls.hpp"
#include "syncopate/tuner/schedule_rules.hpp"
#include "syncopate/tuner/scheduler.hpp"

namespace syncopate::tuner {

struct ModelOptions {
  // Iterations simulated together (the latest steady ones of the run): the first fills the
  // pipeline, the last closes the one before it; those in between are predicted. At least 3.
  int window_iterations = 6;
  double prior_compute_slowdown = kPriorComputeSlowdown;
  double prior_communication_slowdown = kPriorCommunicationSlowdown;
  // Negative: measure from the run (the prior when not measurable). Otherwise: use this.
  double compute_slowdown = -1;
  double communication_slowdown = -1;
  // The run holds some of the job's ranks, chosen as those the others wait for (a large run
  // tuned from its slowest ranks, rank_subset.hpp): the absent ranks are taken to do what the
  // modelled ones do, so a collective starts once the modelled ranks have arrived and takes its
  // fitted time for the whole communicator. False: absent ranks (one rank's trace of a larger
  // job) arrive when the run measured, and their collectives take their measured times.
  bool absent_ranks_mirror = false;
};

struct Prediction {
  bool ok = false;
  std::string error;
  double iteration_ns = 0;                 // mean over predicted iterations and ranks
  std::vector<double> per_iteration_ns;    // per predicted iteration, mean over ranks
  SchedulerStats stats;                    // rank 0's scheduler
  std::array<std::uint64_t, kFallbackCount> fallbacks{};  // summed over ranks
  std::uint64_t simulated_ops = 0;
};

// Per iteration of the window, averaged over predicted iterations: the time each rank's
// compute side (kernels and copies) and communication would take alone, and the bound a
// perfect overlap would reach (the larger of the two, slowest rank).
struct Bounds {
  double compute_ns = 0;
  double communication_ns = 0;
  double ideal_ns = 0;
};

class WhatIfModel {
 public:
  static trace::Result<WhatIfModel> build(const analyzer::RunModel& model, const analyzer::Analysis& analysis,
                                          const OpPointers& pointers, const ModelOptions& options = {});

  // The same model with other calls: what the recorded program would have issued with another
  // setting (ddp_rebucket.hpp). The fits, the interference, the host timings and the measured
  // iterations stay the recorded run's; a call without a recorded op takes its collective's
  // time from the fit. `fits`: fits of communicators the run itself gives none (one rank's trace
  // of a larger job), for the new calls on them (ddp_buckets_by_size.hpp); a communicator the
  // run fits keeps its own.
  trace::Result<WhatIfModel> withCalls(RecordedRun calls, const std::vector<CommFit>& fits = {}) const;

  // The schedule `rules` describes (nullptr: as recorded). `delayed`: the one-step-delayed
  // mode, in which each consumer waits for the previous iteration's bucket instead of its
  // own (it changes the training mathematics).
  // `channels`: NCCL channel counts the plan sets (channels.hpp); nullptr: as recorded.
  // `connections`: hardware work queues per device (CUDA_DEVICE_MAX_CONNECTIONS,
  // work_queues.hpp); nullopt: as recorded.
  Prediction predict(const ScheduleRules* rules, bool delayed = false,
                     const std::vector<ChannelRule>* channels = nullptr,
                     std::optional<std::uint32_t> connections = std::nullopt) const;

  // The run's CUDA_DEVICE_MAX_CONNECTIONS where its environment set it (readRecordedConnections);
  // 0, a work queue per stream, until set. CUDA's default of 8 is modelled as 0: it covers the
  // few streams a training process uses, and an imported trace's replay, whose host threads may
  // issue in another order than they did, must not wait in a queue on an op issued after.
  void setConnections(std::uint32_t connections) { connections_ = connections; }
  std::uint32_t connections() const { return connections_; }

  // What the recording says of channels (readRecordedChannels); none until set. Where a
  // communicator's collectives ran on several counts, its per-channel bandwidth is fitted from
  // them (fitChannels) and preferred to NCCL's constant.
  void setChannels(RecordedChannels channels);
  const RecordedChannels& channels() const { return channels_; }
  // The most one channel of `comm` moves (bus bytes per ns): fitted, else NCCL's; 0: unknown.
  double perChannelBytesPerNs(std::uint64_t comm) const;
  // Standalone time of a collective on `channels` channels (0: as recorded). Fewer channels than
  // recorded move its bytes at min(recorded bandwidth, channels × per-channel bandwidth); more
  // are taken to gain nothing (the recording cannot show that they would). As recorded without
  // a per-channel bandwidth or a fit of its communicator.
  double collectiveNs(const CollectiveArgs& args, analyzer::Index fallback_op, std::uint32_t channels) const;
  // How hard a collective on `channels` (0: as recorded) slows compute, relative to the
  // recorded collectives the interference was measured with: channels / the usual count.
  double interferenceWeight(analyzer::Index op, std::uint32_t channels) const;

  // The measured iteration time of the predicted iterations (mean over them and the ranks).
  double measuredIterationNs() const { return measured_ns_; }
  const std::vector<double>& measuredPerIteration() const { return measured_per_iteration_; }
  std::int64_t firstIteration() const { return first_; }
  std::int64_t lastIteration() const { return last_; }
  const std::vector<std::int64_t>& predictedIterations() const { return predicted_; }

  const Interference& interference() const { return interference_; }
  const CommModel& communication() const { return comm_; }
  const HostTimings& hostTimings() const { return host_; }
  const Bounds& bounds() const { return bounds_; }
  const RecordedRun& calls() const { return calls_; }
  std::size_t ranks() const { return calls_.ranks.size(); }
  // The job's ranks: the modelled ones, or with absent ranks mirrored, the largest
  // communicator's size.
  std::int32_t jobRanks() const { return job_ranks_; }
  bool mirrorsAbsentRanks() const { return mirror_absent_; }
  // How many of the modelled ranks a call on this collective's communicator waits for.
  std::int32_t participants(const CollectiveArgs& args) const;
  // Standalone time of a collective with these arguments (the fit; the measured time of
  // `fallback_op` when the communicator has no fit).
  double collectiveNs(const CollectiveArgs& args, analyzer::Index fallback_op = analyzer::kNone) const;
  double standaloneNs(analyzer::Index op) const { return standalone_[op]; }
  // A transfer with ranks the run lacks (a collective of a communicator some of whose ranks are
  // absent, a send/receive without arguments): when it started, since the absent ranks arrived
  // when they did, whatever the replay does; nullopt for any other op.
  std::optional<std::int64_t> absentPeersStart(analyzer::Index op) const {
    auto it = absent_peers_start_.find(op);
    return it == absent_peers_start_.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
  }
  analyzer::OpClass opClass(analyzer::Index op) const { return op_class_[op]; }
  // Whether `stream` of rank row `run_rank` (RunModel::ranks) is not one of the application's
  // blocking streams: one it made with cudaStreamNonBlocking, or one the runtime made (those are
  // non-blocking). A synchronize of the legacy stream does not wait for its work.
  bool notBlocking(analyzer::Index run_rank, StreamHandle stream) const {
    if (stream == kLegacyStream) return false;
    auto it = app_streams_.find({run_rank, stream});
    return it == app_streams_.end() || it->second;
  }
  // The window of calls of rank row `r` that is simulated: [begin, end).
  std::pair<std::size_t, std::size_t> windowCalls(std::size_t r) const { return window_[r]; }

 private:
  WhatIfModel() = default;
  // The calls of each rank the simulation covers, from the first predicted iteration's first
  // call to the first call after the last.
  trace::Status setWindows();

  RecordedRun calls_;
  std::vector<double> standalone_;
  std::vector<analyzer::OpClass> op_class_;
  Interference interference_;
  CommModel comm_;
  HostTimings host_;
  Bounds bounds_;
  std::int64_t first_ = 0, last_ = 0;
  std::vector<std::int64_t> predicted_;
  std::vector<std::pair<std::size_t, std::size_t>> window_;
  std::set<std::uint64_t> partial_comms_;  // communicators with ranks absent from the run, taken as measured
  bool mirror_absent_ = false;
  std::int32_t job_ranks_ = 0;
  std::unordered_map<std::uint64_t, std::int32_t> modelled_members_;  // per communicator: modelled ranks on it
  std::unordered_map<analyzer::Index, std::int64_t> absent_peers_start_;
  std::map<std::pair<analyzer::Index, StreamHandle>, bool> app_streams_;  // (rank row, handle) -> non-blocking
  double measured_ns_ = 0;
  std::vector<double> measured_per_iteration_;
  RecordedChannels channels_;
  std::uint32_t connections_ = 0;
};

}  // namespace syncopate::tuner
