#include "syncopate/gui/widgets/recommendations_panel.hpp"

namespace syncopate::gui {

namespace {

QString msText(const std::optional<double>& ms) {
  return ms ? QString::number(*ms, 'f', 3) + QLatin1String(" ms") : QStringLiteral("–");
}

QString esc(const std::string& s) {
  return QString::fromStdString(s).toHtmlEscaped();
}

QString mathWarning() {
  return QStringLiteral(" <b>(changes the training mathematics: gradients applied one step late)</b>");
}

// "12.345 ms per iteration (iterations 2–5)", as `syncopate compare` measures it.
QString measuredText(const MeasuredIterations& m) {
  return QStringLiteral("%1 ms per iteration (iterations %2–%3%4)")
      .arg(m.mean_ms, 0, 'f', 3)
      .arg(m.first_iteration)
      .arg(m.last_iteration)
      .arg(m.steady ? QString() : QStringLiteral(", all of them: too few to leave out the first and the last"));
}

}  // namespace

RecommendationsPanel::RecommendationsPanel(QWidget* parent) : QTextBrowser(parent) {
  showPlan(nullptr, nullptr, {}, nullptr, nullptr);
}

void RecommendationsPanel::showPlan(const PlanSummary* plan, const TuneSummary* tune, const QString& error,
                                   const analyzer::Analysis* baseline, const analyzer::Analysis* tuned) {
  has_plan_ = plan != nullptr;
  QString out;
  if (!error.isEmpty()) out += QStringLiteral("<p><b>The tuner's files cannot be read:</b> %1</p>").arg(error.toHtmlEscaped());
  if (!plan && !tune) {
    if (error.isEmpty()) {
      out += QStringLiteral("<p><i>No recommendation yet. Run <code>syncopate tune DIR</code>; it appears here as soon "
                            "as DIR/plan.json (or, when nothing is worth changing, DIR/tune.json) exists.</i></p>");
    }
    setHtml(out);
    return;
  }
  auto row = [&](const QString& k, const QString& v) { out += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(k, v); };
  if (plan) {
    out += QStringLiteral("<h3>Recommended: %1</h3>").arg(esc(plan->description));
    const tuner::PlanPrediction& q = plan->plan.prediction;
    if (plan->plan.changesTrainingMathematics()) out += QStringLiteral("<p>%1</p>").arg(mathWarning());
    if (!plan->plan.why.empty()) out += QStringLiteral("<p>%1</p>").arg(esc(plan->plan.why));
    out += QStringLiteral("<table cellspacing=4>");
    if (const auto here = baseline ? measureIterations(*baseline) : std::nullopt) {
      row(QStringLiteral("measured here"), measuredText(*here));
    }
    row(QStringLiteral("baseline (measured / replayed)"),
        msText(q.baseline_measured_ms) + QStringLiteral(" / ") + msText(q.baseline_replay_ms) +
            QStringLiteral(" (replay error %1 %)").arg(q.replay_error * 100, 0, 'f', 1));
    row(QStringLiteral("predicted with the plan"), msText(q.iteration_ms));
    row(QStringLiteral("predicted speedup"), QString::number(q.speedup, 'f', 3) + QStringLiteral("×"));
    row(QStringLiteral("ideal bound"), msText(q.ideal_ms) + QStringLiteral(" (compute %1, communication %2, fully overlapped)")
                                                             .arg(msText(q.compute_ms), msText(q.communication_ms)));
    if (tuned) {
      if (auto check = checkPrediction(*plan, *tuned)) {
        row(QStringLiteral("<u>measured with the plan</u>"),
            measuredText(check->measured) +
                QStringLiteral(" — prediction error %1 %").arg(check->error * 100, 0, 'f', 1));
      }
    }
    out += QStringLiteral("</table>");
    if (!plan->knobs.empty()) {
      out += QStringLiteral("<p><b>Knobs</b></p><table cellspacing=4>");
      for (const auto& [k, v] : plan->knobs) out += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>").arg(esc(k), esc(v));
      out += QStringLiteral("</table>");
    }
  } else if (const TuneSetting* setting = tune->recommendedSetting()) {
    out += QStringLiteral("<h3>Recommended: %1=%2</h3><p>Set it: <code>%3</code></p>")
               .arg(esc(setting->setting), esc(setting->value), esc(setting->how_to_apply));
    out += QStringLiteral("<table cellspacing=4>");
    row(QStringLiteral("measured / replayed by the model"),
        msText(tune->measured_ms) + QStringLiteral(" / ") + msText(tune->replay_ms));
    row(QStringLiteral("predicted with the setting"), msText(setting->predicted_ms));
    out += QStringLiteral("</table>");
  } else {
    out += QStringLiteral("<h3>No change recommended</h3>");
    if (!tune->note.empty()) out += QStringLiteral("<p>%1</p>").arg(esc(tune->note));
    out += QStringLiteral("<table cellspacing=4>");
    row(QStringLiteral("measured / replayed by the model"),
        msText(tune->measured_ms) + QStringLiteral(" / ") + msText(tune->replay_ms) +
            (tune->replay_error ? QStringLiteral(" (replay error %1 %)").arg(*tune->replay_error * 100, 0, 'f', 1) : QString()));
    row(QStringLiteral("ideal bound"), msText(tune->ideal_ms) + QStringLiteral(" (compute and communication fully overlapped)"));
    out += QStringLiteral("</table>");
  }
  if (tune && !tune->frameworks.empty()) {
    out += QStringLiteral("<p><b>The run shows</b></p><ul>");
    for (const std::string& f : tune->frameworks) out += QStringLiteral("<li>%1</li>").arg(esc(f));
    out += QStringLiteral("</ul>");
  }
  if (tune && !tune->settings.empty()) {
    out += QStringLiteral("<p><b>Framework settings</b> (DDP's bucket cap and first bucket, a sharded optimizer's overlap, NCCL's channels: "
                          "each value predicted on the calls it makes)</p>"
                          "<table cellspacing=4><tr><th>setting</th><th>buckets</th><th>predicted</th><th>gain</th></tr>");
    for (const TuneSetting& st : tune->settings) {
      const QString name = esc(st.setting) + QStringLiteral("=") + esc(st.value) +
                           (st.recommended ? QStringLiteral(" <b>← recommended</b>") : QString());
      const QString gain = st.gain ? QString::number(*st.gain * 100, 'f', 1) + QStringLiteral(" %") : QStringLiteral("–");
      out += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td></tr>")
                 .arg(name, st.buckets > 0 ? QString::number(st.buckets) : QStringLiteral("–"), msText(st.predicted_ms), gain);
    }
    out += QStringLiteral("</table>");
  }
  if (tune && !tune->candidates.empty()) {
    out += QStringLiteral("<p><b>Schedules searched</b> (best first)</p><table cellspacing=4><tr><th>schedule</th>"
                          "<th>predicted</th><th>gain</th></tr>");
    for (const TuneCandidate& c : tune->candidates) {
      const QString name = esc(c.schedule) + (c.recommended ? QStringLiteral(" <b>← recommended</b>") : QString()) +
                           (c.changes_training_math ? mathWarning() : QString());
      const QString gain = c.gain ? QString::number(*c.gain * 100, 'f', 1) + QStringLiteral(" %") : QStringLiteral("–");
      out += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td></tr>")
                 .arg(name, c.error.empty() ? msText(c.predicted_ms) : esc(c.error), gain);
    }
    out += QStringLiteral("</table>");
  }
  if (plan) out += QStringLiteral("<p><small>%1 · from %2</small></p>").arg(esc(plan->path.string()), esc(plan->plan.source_run));
  setHtml(out);
}

}  // namespace syncopate::gui
