// `syncopate tune` as a library call: load a run, analyse it, build the what-if model, report
// its replay error, search the schedules, and make the plan of the best one when it gains
// enough (docs/tuner.md, "syncopate tune").
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/trace/status.hpp"
#include "syncopate/tuner/channel_search.hpp"
#include "syncopate/tuner/ddp_buckets_by_size.hpp"
#include "syncopate/tuner/ddp_rebucket.hpp"
#include "syncopate/tuner/framework_detect.hpp"
#include "syncopate/tuner/fsdp_settings.hpp"
#include "syncopate/tuner/plan.hpp"
#include "syncopate/tuner/search.hpp"
#include "syncopate/tuner/sharded_overlap.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace syncopate::tuner {

// Channel counts are added to a recommended schedule when they gain at least this much over it.
inline constexpr double kChannelMinGain = 0.005;

struct TuneOptions {
  ModelOptions model;
  SearchOptions search;
  std::string iteration_marker;  // empty: the analyzer's default markers
  // Device memory a plan may add (its fusion buffer), `--memory-limit`. nullopt: what the
  // recording shows was free (tuneRun; no limit where no store says its device's memory).
  std::optional<std::uint64_t> memory_limit;
  // How many ranks to model (`--model-ranks`): the slowest that many, read with the whole run's
  // analysis results (rank_subset.hpp); a count at least the run's ranks models every rank.
  // nullopt: every rank, unless the run has more than kModelEveryRankUpTo ranks and its
  // analysis results, when the kSlowestRanksModelled slowest.
  std::optional<std::size_t> model_ranks;
  // Whether the job's framework can overlap the gathering of parameters: DeepSpeed has no such
  // setting, so overlap_param_gather is predicted for it but never recommended, nor a bucket size
  // with it (tuneRun sets this from the frameworks the run shows).
  bool param_gather_setting = true;
};
inline constexpr std::size_t kModelEveryRankUpTo = 64;
inline constexpr std::size_t kSlowestRanksModelled = 8;

// A run modelled from some of its ranks: which, and of how many.
struct ModelledRanks {
  std::vector<std::int32_t> ranks;  // global ranks
  std::size_t of = 0;
};

// A setting of the framework the job runs under, with what the model predicts of it.
struct SettingPrediction {
  std::string setting;       // "bucket_cap_mb"
  std::string value;         // as the setting takes it: "50"
  std::string how_to_apply;  // the line to change
  std::size_t buckets = 0;   // what the value makes of the run (DDP: buckets per iteration)
  double predicted_iteration_ms = 0;
  double gain = 0;           // 1 - predicted / replayed
  std::string with;          // other settings' values it was predicted with: "overlap_grad_reduce=on, ..."
};

// The memory limit the search applied, and where it came from.
struct MemoryLimit {
  std::uint64_t bytes = 0;  // 0: none
  std::string source;       // "--memory-limit", "free in the recording (rank R: ...)" or "none known"
};

// Progress of the whole tune: stage ("loading", "modelling", "searching") and counts.
using TuneProgress = std::function<void(std::string_view stage, std::size_t done, std::size_t total)>;

struct TuneReport {
  std::string run_dir;
  std::int32_t ranks = 0;
  std::vector<std::int64_t> predicted_iterations;
  double measured_ms = 0;          // mean iteration time of the predicted iterations
  double replay_ms = 0;            // the model's replay of the recorded schedule
  double replay_error = 0;         // (replay - measured) / measured
  // Per predicted iteration: measured and replayed (ms), and the replay's error.
  std::vector<double> measured_per_iteration_ms, replay_per_iteration_ms, replay_error_per_iteration;
  // What the run lacked and the model assumed instead, and how sure it is therefore.
  RunAssumptions assumptions;
  bool model_buffers_known = true;    // false: only the replay, no schedule was searched
  std::string confidence;             // "high", "medium" or "low"
  std::vector<std::string> confidence_reasons;
  Bounds bounds;
  Interference interference;
  CommModel communication;
  double launch_latency_ns = 0;
  SearchResult search;
  MemoryLimit memory_limit;
  // The frameworks the run shows by name, and what of their settings it shows (tuneRun).
  std::vector<DetectedFramework> frameworks;
  // DDP's reducer, if the run shows it, each bucket cap and (with the cap unset) each first bucket
  // predicted, and the best one when it gains enough (`--min-gain`).
  DdpReducer ddp;
  std::vector<SettingPrediction> ddp_bucket_caps;
  std::vector<SettingPrediction> ddp_first_buckets;
  std::vector<std::string> ddp_caps_not_predicted;  // "SETTING=VALUE: why", each value left out
  // DDP's gradient_as_bucket_view: the recorded value, then the other where it is predicted; the
  // other recommended when it gains enough, or why it is not predicted.
  std::vector<SettingPrediction> ddp_bucket_view;
  std::optional<SettingPrediction> ddp_bucket_view_recommended;
  std::string ddp_bucket_view_not_predicted;
  std::optional<SettingPrediction> setting;
  // DDP's bucket caps and first buckets predicted from its buckets alone (ddp_buckets_by_size.hpp): for a trace,
  // what `setting` comes from; for a recorded run, beside the reducer's, to compare the models.
  DdpBucketsBySize ddp_by_size;
  std::vector<SettingPrediction> ddp_caps_by_size;
  std::vector<SettingPrediction> ddp_first_buckets_by_size;
  double ddp_by_size_baseline_ms = 0;  // the recorded buckets rewritten as the other caps are
  std::vector<std::string> ddp_by_size_assumptions;  // what the prediction assumed, in words
  // Where the reducer was found, gradient_as_bucket_view as a trace would have it read and
  // predicted (from the copies back alone), to compare; for a trace that reading is ddp_bucket_view.
  std::vector<SettingPrediction> ddp_bucket_view_by_size;
  std::string ddp_bucket_view_by_size_not_predicted;
  // NCCL channel counts on top of the recommended schedule (or the recorded one).
  ChannelSearch channels;
  // NCCL_MAX_CTAS, each count predicted on the recorded schedule, and the best when it gains
  // enough.
  std::vector<SettingPrediction> nccl_max_ctas;
  std::optional<SettingPrediction> max_ctas_setting;
  // CUDA_DEVICE_MAX_CONNECTIONS (work_queues.hpp): what the run ran with, each larger count up to
  // CUDA's default predicted on the recorded schedule, and the best when it gains enough.
  std::uint32_t recorded_connections = kCudaDefaultConnections;
  bool connections_set = false;  // the job's environment set the variable
  std::string connections_note;  // what the stores said, where it is worth saying
  std::string connections_assumption;  // what the predictions assumed that the recording cannot show
  std::vector<SettingPrediction> cuda_max_connections;
  std::optional<SettingPrediction> connections_setting;
  // A sharded optimizer, if the run shows one (sharded_overlap.hpp): each setting that overlaps
  // its collectives with compute as recorded (the replay) and, where it was off, on; those that
  // gain enough (overlap_param_gather only where the framework has it: TuneOptions); and both on
  // together when both were off (0: not predicted).
  ShardedOptimizerRun sharded;
  std::vector<SettingPrediction> overlap_grad_reduce, overlap_param_gather;
  std::vector<SettingPrediction> sharded_recommended;
  double sharded_both_on_ms = 0;
  std::vector<std::string> sharded_not_predicted;  // a setting left unpredicted, and why
  // Its bucket size (sharded_buckets.hpp), each size that buckets it otherwise than a smaller one;
  // the recorded buckets rewritten as the sizes are (what the sizes' steps are measured against);
  // why none is predicted, when none is.
  std::vector<SettingPrediction> sharded_bucket_sizes;
  std::vector<std::string> sharded_buckets_not_predicted;  // "bucket_size=N: why", each size left out
  double sharded_buckets_baseline_ms = 0;
  std::string sharded_buckets_why_not;
  // PyTorch FSDP, if the run shows it (fsdp_settings.hpp): each value of its backward_prefetch,
  // forward_prefetch and limit_all_gathers, the recorded one the replay and the others its step
  // moved by what they change against the recorded values written the same way (fsdp_rewritten_ms);
  // those that gain enough (never limit_all_gathers=False, whose memory the model does not count).
  FsdpRun fsdp;
  double fsdp_rewritten_ms = 0;
  std::vector<SettingPrediction> fsdp_backward_prefetch, fsdp_forward_prefetch, fsdp_limit_all_gathers;
  std::vector<SettingPrediction> fsdp_recommended;
  std::vector<std::string> fsdp_not_predicted;  // "SETTING=VALUE: why", each value left out
  std::optional<Plan> plan;        // the recommended plan, if any
  // Why `recommendations` is empty (the search's note, also what the GUI shows): what `--json`
  // says under `recommendations_note`.
  std::string recommendations_note;
  // Set when the model holds only the run's slowest ranks (tuneRun).
  std::optional<ModelledRanks> modelled_ranks;
};

trace::Result<TuneReport> tuneRun(const std::filesystem::path& run_dir, const TuneOptions& options,
                                  const TuneProgress& progress = {});

// The same on a model already built (tests, the demo).
trace::Result<TuneReport> tuneModel(const WhatIfModel& model, std::string run_dir, std::int32_t ranks,
                                    const TuneOptions& options, const TuneProgress& progress = {});

// A sharded optimizer's settings put in the words of the framework the report shows, if it shows
// Megatron-LM or DeepSpeed (tuneRun does it once it has detected them; DeepSpeed's ZeRO 1/2 has
// no overlap of the parameters' gathering, which TuneOptions::param_gather_setting keeps from
// its runs' recommendations).
void nameShardedSettings(TuneReport& report);

// The plan of candidate `c` of a report (what `tune` writes when c is the recommendation).
Plan planFor(const TuneReport& report, const Candidate& c);

nlohmann::json tuneReportJson(const TuneReport& report);
std::string tuneReportText(const TuneReport& report, std::size_t max_rows = 12);

}  // namespace syncopate::tuner
