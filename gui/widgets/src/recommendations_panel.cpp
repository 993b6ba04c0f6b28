#include "syncopate/gui/widgets/recommendations_panel.hpp"

namespace syncopate::gui {

namespace {

QString msText(const std::optional<double>& ms) {
  return ms ? QString::number(*ms, 'f', 3) + QLatin1String(" ms") : QStringLiteral("–");
}

QString esc(const std::string& s) {
  return QString::fromStdString(s).toHtmlEscaped();
}

}  // namespace

RecommendationsPanel::RecommendationsPanel(QWidget* parent) : QTextBrowser(parent) {
  showPlan(nullptr, {}, nullptr, nullptr);
}

void RecommendationsPanel::showPlan(const PlanSummary* plan, const QString& error, const analyzer::Analysis* baseline,
                                    const analyzer::Analysis* tuned) {
  has_plan_ = plan != nullptr;
  if (!plan) {
    if (!error.isEmpty()) {
      setHtml(QStringLiteral("<p><b>The plan cannot be read:</b> %1</p>").arg(error.toHtmlEscaped()));
    } else {
      setHtml(QStringLiteral("<p><i>No plan yet. Run <code>syncopate tune DIR</code>; its recommendation appears "
                             "here as soon as DIR/plan.json exists.</i></p>"));
    }
    return;
  }
  QString out;
  if (plan->recommended) out += QStringLiteral("<h3>Recommended schedule</h3>");
  else out += QStringLiteral("<h3>No change recommended</h3>");
  if (!plan->reason.empty()) out += QStringLiteral("<p>%1</p>").arg(esc(plan->reason));
  if (plan->changes_training_math) {
    out += QStringLiteral("<p><b>This plan changes the training mathematics</b> (gradients are applied one step "
                          "late): opt-in only.</p>");
  }
  out += QStringLiteral("<table cellspacing=4>");
  auto row = [&](const QString& k, const QString& v) { out += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(k, v); };
  if (baseline) row(QStringLiteral("measured iteration"), QString::number(static_cast<double>(baseline->aggregate.window_ns) / 1e6, 'f', 3) + QLatin1String(" ms"));
  row(QStringLiteral("replayed baseline"), msText(plan->baseline_ms) +
                                              (plan->replay_error ? QStringLiteral(" (replay error %1 %)").arg(*plan->replay_error * 100, 0, 'f', 1) : QString()));
  row(QStringLiteral("predicted iteration"), msText(plan->predicted_ms));
  row(QStringLiteral("predicted speedup"), plan->speedup ? QString::number(*plan->speedup, 'f', 3) + QStringLiteral("×") : QStringLiteral("–"));
  row(QStringLiteral("ideal bound"), msText(plan->ideal_ms) + QStringLiteral(" (max of compute and communication)"));
  if (tuned) {
    if (auto check = checkPrediction(*plan, *tuned)) {
      row(QStringLiteral("<u>measured with the plan</u>"),
          QStringLiteral("%1 ms — prediction error %2 %").arg(check->measured_ms, 0, 'f', 3).arg(check->error * 100, 0, 'f', 1));
    }
  }
  out += QStringLiteral("</table>");
  if (!plan->knobs.empty()) {
    out += QStringLiteral("<p><b>Knobs</b></p><table cellspacing=4>");
    for (const auto& [k, v] : plan->knobs) out += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>").arg(esc(k), esc(v));
    out += QStringLiteral("</table>");
  }
  if (!plan->candidates.empty()) {
    out += QStringLiteral("<p><b>Candidates</b> (best first)</p><table cellspacing=4><tr><th>schedule</th><th>predicted</th><th>speedup</th></tr>");
    for (const PlanCandidate& c : plan->candidates) {
      out += QStringLiteral("<tr><td>%1%2</td><td>%3</td><td>%4</td></tr>")
                 .arg(esc(c.name), c.changes_training_math ? QStringLiteral(" <i>(changes the mathematics)</i>") : QString(),
                      msText(c.predicted_ms),
                      c.speedup ? QString::number(*c.speedup, 'f', 3) + QStringLiteral("×") : QStringLiteral("–"));
    }
    out += QStringLiteral("</table>");
  }
  out += QStringLiteral("<p><small>%1 · from run %2</small></p>").arg(esc(plan->path.string()), esc(plan->source_run));
  setHtml(out);
}

}  // namespace syncopate::gui
