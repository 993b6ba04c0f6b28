#include "syncopate/gui/model/plan_summary.hpp"

#include <set>
#include <string>

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

// The top-level object of a JSON file, or why there is none.
trace::Result<QJsonObject> readObject(const std::filesystem::path& file, const char* what_to_run) {
  QFile f(QString::fromStdString(file.string()));
  if (!f.exists()) return trace::failure(file.string() + " does not exist: run `" + what_to_run + "` first.");
  if (!f.open(QIODevice::ReadOnly))
    return trace::failure(file.string() + " cannot be read: " + f.errorString().toStdString() + ".");
  QJsonParseError parse_error;
  const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &parse_error);
  if (doc.isNull()) {
    return trace::failure(file.string() + " is not valid JSON (" + parse_error.errorString().toStdString() +
                          " at offset " + std::to_string(parse_error.offset) + ").");
  }
  if (!doc.isObject()) return trace::failure(file.string() + " does not hold a JSON object.");
  return doc.object();
}

}  // namespace

trace::Result<PlanSummary> readPlan(const std::filesystem::path& file) {
  auto plan = tuner::readPlan(file);
  if (!plan) return plan.status();
  PlanSummary p;
  p.path = file;
  p.plan = std::move(plan).value();
  p.description = tuner::describe(p.plan.knobs);
  p.knobs = tuner::knobSettings(p.plan.knobs);
  return p;
}

trace::Result<TuneSummary> readTune(const std::filesystem::path& file) {
  auto read = readObject(file, "syncopate tune DIR");
  if (!read) return read.status();
  const QJsonObject& o = read.value();
  if (!o.value("candidates").isArray()) {
    return trace::failure(file.string() + " is not a tune report: it has no \"candidates\" list.");
  }
  TuneSummary t;
  t.path = file;
  t.measured_ms = number(o, "measured_iteration_ms");
  t.replay_ms = number(o, "replay_iteration_ms");
  t.replay_error = number(o, "replay_error");
  t.ideal_ms = number(o, "ideal_iteration_ms");
  t.note = o.value("note").toString().toStdString();
  for (const QJsonValue& v : o.value("candidates").toArray()) {
    const QJsonObject c = v.toObject();
    t.candidates.push_back({c.value("schedule").toString().toStdString(), number(c, "predicted_iteration_ms"),
                            number(c, "gain"), c.value("error").toString().toStdString(),
                            c.value("changes_training_mathematics").toBool(false), c.value("recommended").toBool(false)});
  }
  // A value as the panel shows it: with the other settings it was predicted with, if any
  // ("20000000 with overlap_grad_reduce=on").
  const auto shownValue = [](const QJsonObject& s) {
    std::string value = s.value("value").toString().toStdString();
    if (s.contains("with")) value += " with " + s.value("with").toString().toStdString();
    return value;
  };
  std::set<std::pair<std::string, std::string>> recommended;  // (setting, value as shown)
  for (const QJsonValue& v : o.value("recommendations").toArray()) {
    const QJsonObject r = v.toObject();
    recommended.emplace(r.value("setting").toString().toStdString(), shownValue(r));
  }
  const QJsonObject framework = o.value("framework").toObject();
  for (const QJsonValue& v : framework.value("detected").toArray()) {
    const QJsonObject f = v.toObject();
    std::string line = f.value("name").toString().toStdString() + " (" + f.value("evidence").toString().toStdString() + ")";
    const QJsonObject settings = f.value("settings").toObject();
    for (auto it = settings.begin(); it != settings.end(); ++it) {
      line += "; " + it.key().toStdString() + ": " + it.value().toString().toStdString();
    }
    t.frameworks.push_back(std::move(line));
  }
  // DDP's caps and first buckets (a recorded run's from its reducer, a trace's from its buckets
  // alone) and gradient_as_bucket_view, a sharded optimizer's overlaps and bucket sizes, FSDP's settings, NCCL_MAX_CTAS,
  // CUDA_DEVICE_MAX_CONNECTIONS.
  const QJsonObject ddp = framework.value("ddp").toObject();
  const QJsonObject ddp_values = ddp.contains("bucket_caps") ? ddp : ddp.value("from_bucket_sizes").toObject();
  QJsonArray settings = ddp_values.value("bucket_caps").toArray();
  for (const QJsonValue& v : ddp_values.value("first_buckets").toArray()) settings.append(v);
  for (const QJsonValue& v : ddp.value("gradient_as_bucket_view").toObject().value("values").toArray()) settings.append(v);
  const QJsonObject sharded = framework.value("sharded").toObject();
  for (const char* key : {"overlap_grad_reduce", "overlap_param_gather"}) {
    for (const QJsonValue& v : sharded.value(QLatin1String(key)).toArray()) settings.append(v);
  }
  for (const QJsonValue& v : sharded.value("bucket_size").toObject().value("values").toArray()) settings.append(v);
  const QJsonObject fsdp = framework.value("fsdp").toObject();
  for (const char* key : {"backward_prefetch", "forward_prefetch", "limit_all_gathers"}) {
    for (const QJsonValue& v : fsdp.value(QLatin1String(key)).toArray()) settings.append(v);
  }
  for (const QJsonValue& v : framework.value("nccl").toObject().value("max_ctas").toArray()) settings.append(v);
  const QJsonObject connections = framework.value("cuda").toObject().value("max_connections").toObject();
  for (const QJsonValue& v : connections.value("values").toArray()) settings.append(v);
  for (const QJsonValue& v : settings) {
    const QJsonObject c = v.toObject();
    TuneSetting s;
    s.setting = c.value("setting").toString().toStdString();
    s.value = shownValue(c);
    s.how_to_apply = c.value("how_to_apply").toString().toStdString();
    s.predicted_ms = number(c, "predicted_iteration_ms");
    s.gain = number(c, "gain");
    s.buckets = static_cast<std::size_t>(c.value("buckets").toInteger(0));
    s.recommended = recommended.count({s.setting, s.value}) > 0;
    t.settings.push_back(std::move(s));
  }
  // NCCL channel counts, each kind and count predicted on top of the schedule.
  for (const QJsonValue& v : o.value("channels").toObject().value("candidates").toArray()) {
    const QJsonObject c = v.toObject();
    const int channels = c.value("channels").toInt(0);
    TuneSetting s;
    s.setting = "nccl_channels";
    s.value = c.value("collective").toString().toStdString() + " on " + std::to_string(channels) +
              (channels == 1 ? " channel" : " channels");
    s.how_to_apply = "syncopate run --plan (NCCL's tuner plugin), or nccl_tuner.conf beside the plan";
    s.predicted_ms = number(c, "predicted_iteration_ms");
    s.gain = number(c, "gain");
    s.recommended = recommended.count({s.setting, s.value}) > 0;
    t.settings.push_back(std::move(s));
  }
  return t;
}

std::optional<MeasuredIterations> measureIterations(const analyzer::Analysis& analysis) {
  const std::vector<std::int64_t>& numbers = analysis.iterations.numbers;
  MeasuredIterations m;
  m.steady = numbers.size() >= 3;
  const std::size_t first = m.steady ? 1 : 0, end = m.steady ? numbers.size() - 1 : numbers.size();
  double sum_ms = 0;
  std::size_t counted = 0;
  for (std::size_t i = first; i < end; ++i) {
    const auto rows = analysis.iteration(numbers[i]);
    if (rows.empty()) continue;
    double ranks_ms = 0;
    for (const analyzer::RankIterationMetrics* r : rows) {
      ranks_ms += static_cast<double>(r->window.end - r->window.start) / 1e6;
    }
    sum_ms += ranks_ms / static_cast<double>(rows.size());
    if (counted++ == 0) m.first_iteration = numbers[i];
    m.last_iteration = numbers[i];
  }
  if (counted == 0) return std::nullopt;
  m.mean_ms = sum_ms / static_cast<double>(counted);
  return m;
}

std::optional<PredictionCheck> checkPrediction(const PlanSummary& plan, const analyzer::Analysis& measured) {
  const double predicted_ms = plan.plan.prediction.iteration_ms;
  if (predicted_ms <= 0) return std::nullopt;
  const auto m = measureIterations(measured);
  if (!m || m->mean_ms <= 0) return std::nullopt;
  return PredictionCheck{predicted_ms, *m, (m->mean_ms - predicted_ms) / predicted_ms};
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
  std::error_code ec;
  std::string error;
  // Watch the files too: the tuner may rewrite them in place.
  auto watchFile = [&](const std::filesystem::path& file) {
    const QString name = QString::fromStdString(file.string());
    if (!watcher_.files().contains(name)) watcher_.addPath(name);
  };
  std::optional<PlanSummary> plan;
  if (const auto file = dir_ / kPlanFileName; std::filesystem::exists(file, ec)) {
    watchFile(file);
    if (auto read = readPlan(file)) plan = std::move(read).value();
    else error = read.message();
  }
  std::optional<TuneSummary> tune;
  if (const auto file = dir_ / kTuneFileName; std::filesystem::exists(file, ec)) {
    watchFile(file);
    if (auto read = readTune(file)) tune = std::move(read).value();
    else error += (error.empty() ? "" : " ") + read.message();
  }
  bool applied = false;
  for (std::filesystem::directory_iterator it(dir_, ec), end; !ec && it != end && !applied; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    applied = name.starts_with("runtime-rank-") && name.ends_with(".json");
  }
  plan_ = std::move(plan);
  tune_ = std::move(tune);
  applied_plan_ = applied;
  error_ = std::move(error);
  emit changed();
}

}  // namespace syncopate::gui
