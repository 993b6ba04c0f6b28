#include "syncopate/gui/model/plan_summary.hpp"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace syncopate::gui {

namespace {

std::optional<double> number(const QJsonObject& o, const char* key) {
  const QJsonValue v = o.value(QLatin1String(key));
  return v.isDouble() ? std::optional<double>(v.toDouble()) : std::nullopt;
}

std::string text(const QJsonValue& v) {
  switch (v.type()) {
    case QJsonValue::Bool: return v.toBool() ? "yes" : "no";
    case QJsonValue::Double: {
      const double d = v.toDouble();
      return d == static_cast<double>(static_cast<long long>(d)) ? std::to_string(static_cast<long long>(d))
                                                                 : QString::number(d, 'g', 6).toStdString();
    }
    case QJsonValue::String: return v.toString().toStdString();
    case QJsonValue::Array:
    case QJsonValue::Object: {
      QJsonDocument doc = v.isArray() ? QJsonDocument(v.toArray()) : QJsonDocument(v.toObject());
      return doc.toJson(QJsonDocument::Compact).toStdString();
    }
    default: return "null";
  }
}

}  // namespace

analyzer::Expected<PlanSummary> readPlan(const std::filesystem::path& file) {
  const QString name = QString::fromStdString(file.string());
  QFile f(name);
  if (!f.exists()) return analyzer::Error{file.string() + " does not exist: run `syncopate tune` on the run first."};
  if (!f.open(QIODevice::ReadOnly)) return analyzer::Error{file.string() + " cannot be read: " + f.errorString().toStdString() + "."};
  QJsonParseError parse_error;
  const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &parse_error);
  if (doc.isNull()) {
    return analyzer::Error{file.string() + " is not valid JSON (" + parse_error.errorString().toStdString() +
                           " at offset " + std::to_string(parse_error.offset) + ")."};
  }
  if (!doc.isObject()) return analyzer::Error{file.string() + " is not a plan: its top level is not a JSON object."};
  const QJsonObject o = doc.object();
  if (o.value("format").toString() != QLatin1String("syncopate-plan")) {
    return analyzer::Error{file.string() + " is not a plan: it lacks \"format\": \"syncopate-plan\"."};
  }
  PlanSummary p;
  p.path = file;
  if (!o.value("version").isDouble()) return analyzer::Error{file.string() + " has no numeric \"version\"."};
  p.version = o.value("version").toInt();
  if (p.version > kPlanMajorVersion || p.version < 1) {
    return analyzer::Error{file.string() + " is plan version " + std::to_string(p.version) + "; this build reads version " +
                           std::to_string(kPlanMajorVersion) + ": use the syncopate that wrote it."};
  }
  p.source_run = o.value("source_run").toString().toStdString();
  p.recommended = o.value("recommended").toBool(false);
  p.reason = o.value("reason").toString().toStdString();
  p.changes_training_math = o.value("changes_training_math").toBool(false);
  const QJsonObject predicted = o.value("predicted").toObject();
  p.baseline_ms = number(predicted, "baseline_iteration_ms");
  p.predicted_ms = number(predicted, "iteration_ms");
  p.speedup = number(predicted, "speedup");
  p.ideal_ms = number(predicted, "ideal_iteration_ms");
  p.replay_error = number(predicted, "replay_error");
  const QJsonObject knobs = o.value("knobs").toObject();
  for (auto it = knobs.begin(); it != knobs.end(); ++it) p.knobs.emplace_back(it.key().toStdString(), text(it.value()));
  for (const QJsonValue& v : o.value("candidates").toArray()) {
    const QJsonObject c = v.toObject();
    p.candidates.push_back({c.value("name").toString().toStdString(), number(c, "predicted_iteration_ms"),
                            number(c, "speedup"), c.value("changes_training_math").toBool(false)});
  }
  return p;
}

std::optional<PredictionCheck> checkPrediction(const PlanSummary& plan, const analyzer::Analysis& measured) {
  if (!plan.predicted_ms || *plan.predicted_ms <= 0 || measured.aggregate.window_ns <= 0) return std::nullopt;
  PredictionCheck c;
  c.predicted_ms = *plan.predicted_ms;
  c.measured_ms = static_cast<double>(measured.aggregate.window_ns) / 1e6;
  c.error = (c.measured_ms - c.predicted_ms) / c.predicted_ms;
  return c;
}

PlanWatcher::PlanWatcher(QObject* parent) : QObject(parent) {
  connect(&watcher_, &QFileSystemWatcher::directoryChanged, this, [this] { reread(); });
  connect(&watcher_, &QFileSystemWatcher::fileChanged, this, [this] { reread(); });
}

void PlanWatcher::watch(const std::filesystem::path& run_dir) {
  if (!watcher_.directories().isEmpty()) watcher_.removePaths(watcher_.directories());
  if (!watcher_.files().isEmpty()) watcher_.removePaths(watcher_.files());
  dir_ = run_dir;
  watcher_.addPath(QString::fromStdString(run_dir.string()));
  reread();
}

void PlanWatcher::reread() {
  const std::filesystem::path file = dir_ / kPlanFileName;
  std::error_code ec;
  std::optional<PlanSummary> plan;
  std::string error;
  if (std::filesystem::exists(file, ec)) {
    // Watch the file too: the tuner may rewrite it in place.
    const QString name = QString::fromStdString(file.string());
    if (!watcher_.files().contains(name)) watcher_.addPath(name);
    auto read = readPlan(file);
    if (read) plan = std::move(read).value();
    else error = read.error().message;
  }
  plan_ = std::move(plan);
  error_ = std::move(error);
  emit changed();
}

}  // namespace syncopate::gui
