// `syncopate compare DIR DIR2` as a library call: the baseline run against the tuned one —
// measured iteration times and speedup, the plan's prediction and its error, the ideal bound
// and how much of the headroom the tuned run closed, exposed communication per rank before and
// after, whether the runtime applied the plan (and where it fell back), and whether the
// gradients the job printed are identical (docs/tuner.md, "syncopate compare").
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "syncopate/trace/status.hpp"

namespace syncopate::tuner {

struct RunSummary {
  std::string dir;
  std::int32_t ranks = 0;
  std::vector<std::int64_t> iterations;     // the ones measured (steady: not the first nor the last)
  std::vector<double> iteration_ms;         // per measured iteration, mean over ranks
  double mean_iteration_ms = 0, median_iteration_ms = 0;
  std::vector<double> exposed_communication_ms;  // per rank, mean per measured iteration
  std::vector<double> communication_ms;          // per rank, mean per measured iteration
  std::map<std::int64_t, std::string> checksums;  // iteration -> grad_checksum the job printed
  bool has_job_log = false;
};

struct Comparison {
  RunSummary baseline, tuned;
  double speedup = 0;                       // baseline mean / tuned mean
  std::optional<double> predicted_ms;       // the plan's prediction (tuned run's plan.json)
  std::optional<double> prediction_error;   // (tuned measured - predicted) / predicted
  std::optional<double> ideal_ms;           // the plan's ideal bound
  std::optional<double> headroom_closed;    // (baseline - tuned) / (baseline - ideal)
  std::string schedule;                     // the plan's description (and its NCCL channel counts)
  bool channels_only = false;               // the plan sets NCCL channel counts and reorders nothing
  std::optional<bool> gradients_identical;  // null when a run kept no checksums to compare
  std::int64_t checksums_compared = 0;
  std::string gradients_note;
  std::int32_t ranks_applying_plan = -1;    // -1: no runtime report
  std::map<std::string, std::uint64_t> fallbacks;
  // Kernel launches the runtime saw on every rank, and those it ordered as barriers; the share
  // is null when no report counted a launch.
  std::uint64_t launches = 0, barrier_launches = 0;
  std::optional<double> barrier_share;
  std::vector<std::string> watchdog;
};

struct CompareOptions {
  std::string iteration_marker;
};

trace::Result<RunSummary> summarizeRunDir(const std::filesystem::path& dir, const CompareOptions& options = {});
trace::Result<Comparison> compareRuns(const std::filesystem::path& baseline, const std::filesystem::path& tuned,
                                      const CompareOptions& options = {});

// `grad_checksum iter=N value=HEX` lines of a job's output (dp_trainer's and grad_sync's).
std::map<std::int64_t, std::string> parseChecksums(const std::string& text);

nlohmann::json comparisonJson(const Comparison& c);
std::string comparisonText(const Comparison& c);

}  // namespace syncopate::tuner
