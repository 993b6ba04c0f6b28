// The tuner's recommendation as the recommendations panel shows it, read from the run
// directory: `plan.json` (the plan `syncopate tune` writes when a schedule is worth it; format in
// docs/tuner.md, "Plan format") and `tune.json` (the ranked candidates, or why nothing was
// recommended). Plus the check of a plan's prediction against a run that applied it.
//
// The plan is read by the tuner's own reader, which checks it as the runtime will (format,
// version, checksum, groups): a plan the GUI shows is one the runtime would apply.
#pragma once

#include <QFileSystemWatcher>
#include <QObject>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/trace/status.hpp"
#include "syncopate/tuner/plan.hpp"

namespace syncopate::gui {

inline constexpr const char* kPlanFileName = "plan.json";
inline constexpr const char* kTuneFileName = "tune.json";

// A plan as the recommendations panel shows it.
struct PlanSummary {
  std::filesystem::path path;
  tuner::Plan plan;
  std::string description;                                 // the knobs in words
  std::vector<std::pair<std::string, std::string>> knobs;  // name, value as text, by name
};

// The search's ranked candidates (tune.json).
struct TuneCandidate {
  std::string schedule;
  std::optional<double> predicted_ms, gain;
  std::string error;                    // why it could not be predicted
  bool changes_training_math = false;
  bool recommended = false;
};

// A setting of the job's framework with its prediction (tune.json's "framework"): DDP's
// bucket_cap_mb and first bucket, one per value predicted (from the reducer of a recorded run,
// from the buckets alone of a trace), a sharded optimizer's overlaps and bucket size,
// NCCL_MAX_CTAS, CUDA_DEVICE_MAX_CONNECTIONS.
struct TuneSetting {
  std::string setting, value, how_to_apply;
  std::optional<double> predicted_ms, gain;
  std::size_t buckets = 0;
  bool recommended = false;  // also in tune.json's "recommendations"
};

struct TuneSummary {
  std::filesystem::path path;
  std::optional<double> measured_ms, replay_ms, replay_error, ideal_ms;
  std::vector<TuneCandidate> candidates;  // best first
  std::vector<TuneSetting> settings;      // in the order predicted
  // The frameworks the run shows, one line each: "PyTorch DDP (6 DistributedDataParallel.forward
  // ranges): buckets per step: 5 (...)".
  std::vector<std::string> frameworks;
  std::string note;                       // why nothing is recommended, when nothing is
  const TuneSetting* recommendedSetting() const {
    for (const TuneSetting& s : settings)
      if (s.recommended) return &s;
    return nullptr;
  }
};

// Each fails with a sentence naming the file when it is missing, not JSON or not of that kind;
// a plan also when it is of another major version, edited, or incomplete.
trace::Result<PlanSummary> readPlan(const std::filesystem::path& file);
trace::Result<TuneSummary> readTune(const std::filesystem::path& file);

// A run's iteration time as `syncopate compare` measures it (docs/tuner.md): the mean over the
// steady iterations (all but the first, a warm-up, and the last, whose window has no successor)
// of the mean over ranks of the iteration window. A run of fewer than three iterations has no
// steady one; all of its iterations are then measured, and `steady` says so.
struct MeasuredIterations {
  double mean_ms = 0;
  std::int64_t first_iteration = 0, last_iteration = 0;  // the iterations measured
  bool steady = true;
};
std::optional<MeasuredIterations> measureIterations(const analyzer::Analysis& analysis);

// Predicted versus measured: the plan's predicted iteration time against a run that applied it.
struct PredictionCheck {
  double predicted_ms = 0;
  MeasuredIterations measured;
  double error = 0;  // (measured - predicted) / predicted
};
std::optional<PredictionCheck> checkPrediction(const PlanSummary& plan, const analyzer::Analysis& measured);

// Watches a run directory and rereads plan.json and tune.json whenever they appear or change,
// so the panel shows a recommendation as soon as the tuner writes one.
class PlanWatcher : public QObject {
  Q_OBJECT
 public:
  explicit PlanWatcher(QObject* parent = nullptr);
  // Starts watching `run_dir` (and reads what is there now).
  void watch(const std::filesystem::path& run_dir);
  const std::optional<PlanSummary>& plan() const { return plan_; }
  const std::optional<TuneSummary>& tune() const { return tune_; }
  // Why a file that exists could not be read (empty when both read or are absent).
  const std::string& error() const { return error_; }
  // Whether the job of this run applied a plan: `syncopate run --plan` leaves the runtime's
  // reports (`runtime-rank-<R>.json`, docs/tuner.md) beside the plan it copied.
  bool appliedPlan() const { return applied_plan_; }

 signals:
  void changed();

 private:
  void reread();
  QFileSystemWatcher watcher_;
  std::filesystem::path dir_;
  std::optional<PlanSummary> plan_;
  std::optional<TuneSummary> tune_;
  std::string error_;
  bool applied_plan_ = false;
};

}  // namespace syncopate::gui
