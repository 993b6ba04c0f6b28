// The tuner's recommendation for the run: the plan (what to change and why), its predicted
// iteration time and speedup against the measured baseline and the ideal bound, the ranked
// candidates of the search, and — when the run that applied the plan is open too — predicted
// versus measured.
#pragma once

#include <QTextBrowser>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/gui/model/plan_summary.hpp"

namespace syncopate::gui {

class RecommendationsPanel : public QTextBrowser {
  Q_OBJECT
 public:
  explicit RecommendationsPanel(QWidget* parent = nullptr);
  // Any of `plan` / `tune` may be null; `error` says why a file that exists could not be read.
  // `baseline` is the analysis of the run the plan came from, `tuned` of the run that applied it.
  void showPlan(const PlanSummary* plan, const TuneSummary* tune, const QString& error,
                const analyzer::Analysis* baseline, const analyzer::Analysis* tuned);
  bool hasPlan() const { return has_plan_; }

 private:
  bool has_plan_ = false;
};

}  // namespace syncopate::gui
