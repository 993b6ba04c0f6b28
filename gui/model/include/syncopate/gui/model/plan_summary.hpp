// The tuner's plan as the recommendations panel shows it: read from `plan.json` in a run
// directory (docs/gui.md, "Plan file", lists the fields read), plus the check of its prediction
// against a measured (tuned) run.
#pragma once

#include <QObject>
#include <QFileSystemWatcher>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/expected.hpp"

namespace syncopate::gui {

inline constexpr const char* kPlanFileName = "plan.json";
inline constexpr int kPlanMajorVersion = 1;

struct PlanCandidate {
  std::string name;
  std::optional<double> predicted_ms, speedup;
  bool changes_training_math = false;
};

struct PlanSummary {
  std::filesystem::path path;
  int version = 0;
  std::string source_run;
  bool recommended = false;
  std::string reason;
  bool changes_training_math = false;
  std::optional<double> baseline_ms, predicted_ms, speedup, ideal_ms, replay_error;
  std::vector<std::pair<std::string, std::string>> knobs;  // name, value as text, by name
  std::vector<PlanCandidate> candidates;                   // ranked, best first
};

// Fails with a sentence naming the file when it is missing, not JSON, not a plan, or of a
// newer major version.
analyzer::Expected<PlanSummary> readPlan(const std::filesystem::path& file);

// Predicted versus measured: the plan's predicted iteration time against the mean iteration
// time of a run that applied it.
struct PredictionCheck {
  double predicted_ms = 0, measured_ms = 0;
  double error = 0;  // (measured - predicted) / predicted
};
std::optional<PredictionCheck> checkPrediction(const PlanSummary& plan, const analyzer::Analysis& measured);

// Watches a run directory and reports its plan whenever plan.json appears or changes, so the
// panel shows a plan as soon as the tuner writes one.
class PlanWatcher : public QObject {
  Q_OBJECT
 public:
  explicit PlanWatcher(QObject* parent = nullptr);
  // Starts watching `run_dir` (and reads its plan now).
  void watch(const std::filesystem::path& run_dir);
  const std::optional<PlanSummary>& plan() const { return plan_; }
  const std::string& error() const { return error_; }

 signals:
  // The plan was read (plan() holds it) or could not be (error() says why; empty: no plan).
  void changed();

 private:
  void reread();
  QFileSystemWatcher watcher_;
  std::filesystem::path dir_;
  std::optional<PlanSummary> plan_;
  std::string error_;
};

}  // namespace syncopate::gui
