// The plan file (docs/tuner.md, "Plan format"): a versioned JSON document saying what the
// runtime should do (the knobs and, per group of all-reduces, the buckets, parts and order),
// why, what the model predicts, the run it came from, and a checksum over all of it that every
// rank verifies before applying it (and agrees on with the others at every flush).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "syncopate/trace/status.hpp"
#include "syncopate/tuner/channels.hpp"
#include "syncopate/tuner/schedule_rules.hpp"
#include "syncopate/tuner/knobs.hpp"

namespace syncopate::tuner {

inline constexpr std::string_view kPlanFormat = "syncopate-plan";
inline constexpr int kPlanMajor = 1;
// 1.1: groups of reduce-scatters and all-gathers, and the "need" order. 1.2: buckets of several
// reduce-scatters or all-gathers (fused through the fusion buffer laid out rank by rank), which a
// 1.1 runtime leaves in their original order. 1.3: channel counts per collective kind and size
// (channels.hpp), applied through NCCL's tuner plugin. 1.0 to 1.2 plans still load.
inline constexpr int kPlanMinor = 3;

struct PlanPrediction {
  double baseline_measured_ms = 0;   // the recorded run's iteration time
  double baseline_replay_ms = 0;     // the model's replay of it
  double replay_error = 0;           // (replay - measured) / measured
  double iteration_ms = 0;           // predicted with the plan
  double speedup = 0;                // baseline_replay_ms / iteration_ms
  double ideal_ms = 0;               // max(compute alone, communication alone)
  double compute_ms = 0, communication_ms = 0;
};

struct Plan {
  std::string version = "1.1";
  std::string source_run;            // the run directory it was made from
  std::int32_t ranks = 0;
  std::vector<std::int64_t> predicted_iterations;
  std::string created_by;            // tool version
  Knobs knobs;
  PlanPrediction prediction;
  std::string why;                   // one paragraph for the user
  double compute_slowdown = 0, communication_slowdown = 0;
  bool interference_measured = false;
  std::vector<GroupPlan> groups;
  std::vector<ChannelRule> channels; // NCCL channel counts (empty: NCCL's own choice everywhere)
  std::uint64_t checksum = 0;        // over everything above, as written

  bool changesTrainingMathematics() const { return knobs.delayed; }
  ScheduleRules rules() const;       // what the runtime executes
};

// The plan's JSON text (with its checksum filled in), and reading it back. Reading verifies
// the format name, the major version, the checksum and every group; each failure says what
// was wrong and what to do.
std::string planJson(Plan& plan);
trace::Result<Plan> parsePlan(std::string_view text);
trace::Result<Plan> readPlan(const std::filesystem::path& file);
trace::Status writePlan(Plan& plan, const std::filesystem::path& file);

// The knobs as the plan file (and tune.json's candidates) write them.
nlohmann::json knobsJson(const Knobs& knobs);

// The knobs as the plan file names them, each with its value in words ("yes"/"no", numbers,
// names), by name: what a user reads of a plan.
std::vector<std::pair<std::string, std::string>> knobSettings(const Knobs& knobs);

}  // namespace syncopate::tuner
