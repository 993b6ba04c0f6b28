#include "syncopate/tuner/compare.hpp"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/tuner/plan.hpp"
#include "median.hpp"

namespace syncopate::tuner {

namespace {

std::string readFile(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// job.log, or the job-<rank>.log files of a run recorded rank by rank.
std::optional<std::string> jobOutput(const std::filesystem::path& dir) {
  if (std::filesystem::exists(dir / "job.log")) return readFile(dir / "job.log");
  std::string all;
  bool any = false;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("job-", 0) == 0 && entry.path().extension() == ".log") {
      all += readFile(entry.path());
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return all;
}

std::string pct(double f) { return fmt::format("{:.1f}%", 100.0 * f); }

}  // namespace

std::map<std::int64_t, std::string> parseChecksums(const std::string& text) {
  static const std::regex line(R"(grad_checksum iter=(\d+) value=([0-9a-fA-F]+))");
  std::map<std::int64_t, std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), line), end; it != end; ++it) {
    out[std::stoll((*it)[1].str())] = (*it)[2].str();
  }
  return out;
}

trace::Result<RunSummary> summarizeRunDir(const std::filesystem::path& dir, const CompareOptions& options) {
  auto model = analyzer::loadRun(dir);
  if (!model.ok()) return model.status();
  analyzer::AnalysisOptions analysis_options;
  analysis_options.iterations.marker = options.iteration_marker;
  analysis_options.critical_path = false;
  auto analysis = analyzer::analyze(*model, analysis_options);
  if (!analysis.ok()) return analysis.status();
  const auto& numbers = analysis->iterations.numbers;
  if (numbers.size() < 3) {
    return trace::failure(fmt::format("{} has {} iterations; compare needs at least 3 (the first and the last are not "
                                      "steady): record more iterations",
                                      dir.string(), numbers.size()));
  }
  RunSummary s;
  s.dir = dir.string();
  s.ranks = static_cast<std::int32_t>(model->ranks.size());
  s.exposed_communication_ms.assign(model->ranks.size(), 0);
  s.communication_ms.assign(model->ranks.size(), 0);
  for (std::size_t i = 1; i + 1 < numbers.size(); ++i) {
    const std::int64_t n = numbers[i];
    double sum = 0;
    int count = 0;
    for (const analyzer::RankIterationMetrics* ri : analysis->iteration(n)) {
      sum += static_cast<double>(ri->window.end - ri->window.start) / 1e6;
      ++count;
      s.exposed_communication_ms[ri->rank] += static_cast<double>(ri->time.exposed_communication_ns) / 1e6;
      s.communication_ms[ri->rank] += static_cast<double>(ri->time.communication_ns) / 1e6;
    }
    if (count == 0) continue;
    s.iterations.push_back(n);
    s.iteration_ms.push_back(sum / count);
  }
  if (s.iteration_ms.empty()) return trace::failure(fmt::format("{}: no steady iteration ran on any rank", dir.string()));
  for (double& v : s.exposed_communication_ms) v /= static_cast<double>(s.iterations.size());
  for (double& v : s.communication_ms) v /= static_cast<double>(s.iterations.size());
  double sum = 0;
  for (double v : s.iteration_ms) sum += v;
  s.mean_iteration_ms = sum / static_cast<double>(s.iteration_ms.size());
  s.median_iteration_ms = median(s.iteration_ms);
  if (auto log = jobOutput(dir)) {
    s.has_job_log = true;
    s.checksums = parseChecksums(*log);
  }
  return s;
}

trace::Result<Comparison> compareRuns(const std::filesystem::path& baseline, const std::filesystem::path& tuned,
                                      const CompareOptions& options) {
  auto a = summarizeRunDir(baseline, options);
  if (!a.ok()) return a.status();
  auto b = summarizeRunDir(tuned, options);
  if (!b.ok()) return b.status();
  Comparison c;
  c.baseline = std::move(a).value();
  c.tuned = std::move(b).value();
  c.speedup = c.baseline.mean_iteration_ms / c.tuned.mean_iteration_ms;

  // The plan the tuned run applied (run --plan keeps it there).
  if (std::filesystem::exists(tuned / "plan.json")) {
    auto plan = readPlan(tuned / "plan.json");
    if (!plan.ok()) return plan.status();
    c.channels_only = plan->groups.empty() && !plan->channels.empty();
    c.schedule = c.channels_only ? "the program's own" : describe(plan->knobs);
    if (!plan->channels.empty()) c.schedule += ", NCCL channels " + channelRulesText(plan->channels);
    c.predicted_ms = plan->prediction.iteration_ms;
    c.prediction_error = (c.tuned.mean_iteration_ms - *c.predicted_ms) / *c.predicted_ms;
    c.ideal_ms = plan->prediction.ideal_ms;
    const double headroom = c.baseline.mean_iteration_ms - *c.ideal_ms;
    if (headroom > 0) c.headroom_closed = (c.baseline.mean_iteration_ms - c.tuned.mean_iteration_ms) / headroom;
  }

  // Gradients: the checksums both jobs printed, iteration by iteration.
  if (!c.baseline.has_job_log || !c.tuned.has_job_log) {
    c.gradients_note = "a run kept no job output (job.log): record both with syncopate record / run";
  } else if (c.baseline.checksums.empty() || c.tuned.checksums.empty()) {
    c.gradients_note = "the job printed no 'grad_checksum iter=N value=X' lines to compare";
  } else {
    bool same = true;
    for (const auto& [iteration, value] : c.baseline.checksums) {
      auto it = c.tuned.checksums.find(iteration);
      if (it == c.tuned.checksums.end()) continue;
      ++c.checksums_compared;
      if (it->second != value) {
        if (same) c.gradients_note = fmt::format("iteration {} differs: {} against {}", iteration, value, it->second);
        same = false;
      }
    }
    if (c.checksums_compared == 0) {
      c.gradients_note = "the two runs printed checksums of no common iteration";
    } else {
      c.gradients_identical = same;
      if (same) c.gradients_note = fmt::format("{} iterations bit-identical", c.checksums_compared);
    }
  }

  // What the runtime of each rank reported.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(tuned, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("runtime-", 0) != 0 || entry.path().extension() != ".json") continue;
    try {
      const nlohmann::json r = nlohmann::json::parse(readFile(entry.path()));
      if (c.ranks_applying_plan < 0) c.ranks_applying_plan = 0;
      if (r.value("applied", false)) ++c.ranks_applying_plan;
      if (r.contains("fallbacks") && r["fallbacks"].is_object()) {
        for (const auto& [code, f] : r["fallbacks"].items()) c.fallbacks[code] += f.value("count", std::uint64_t{0});
      }
      if (r.contains("stats") && r["stats"].is_object()) {
        c.launches += r["stats"].value("launches", std::uint64_t{0});
        c.barrier_launches += r["stats"].value("barrier_launches", std::uint64_t{0});
      }
      if (r.contains("watchdog") && r["watchdog"].is_string()) c.watchdog.push_back(r["watchdog"].get<std::string>());
    } catch (const nlohmann::json::exception&) {
      c.watchdog.push_back(name + " is unreadable");
    }
  }
  if (c.launches > 0) c.barrier_share = static_cast<double>(c.barrier_launches) / static_cast<double>(c.launches);
  return c;
}

nlohmann::json comparisonJson(const Comparison& c) {
  using nlohmann::json;
  auto optional = [](const auto& v) -> json { return v ? json(*v) : json(nullptr); };
  auto ranks = [](const RunSummary& s) {
    json out = json::array();
    for (std::size_t r = 0; r < s.exposed_communication_ms.size(); ++r) {
      out.push_back({{"rank", r}, {"exposed_communication_ms", s.exposed_communication_ms[r]},
                     {"communication_ms", s.communication_ms[r]}});
    }
    return out;
  };
  json j;
  j["baseline_dir"] = c.baseline.dir;
  j["tuned_dir"] = c.tuned.dir;
  j["baseline_iteration_ms"] = c.baseline.mean_iteration_ms;
  j["tuned_iteration_ms"] = c.tuned.mean_iteration_ms;
  j["baseline_median_iteration_ms"] = c.baseline.median_iteration_ms;
  j["tuned_median_iteration_ms"] = c.tuned.median_iteration_ms;
  j["speedup"] = c.speedup;
  j["predicted_iteration_ms"] = optional(c.predicted_ms);
  j["prediction_error"] = optional(c.prediction_error);
  j["ideal_iteration_ms"] = optional(c.ideal_ms);
  j["headroom_closed"] = optional(c.headroom_closed);
  j["gradients_identical"] = optional(c.gradients_identical);
  j["gradient_checksums_compared"] = c.checksums_compared;
  j["gradients_note"] = c.gradients_note;
  j["schedule"] = c.schedule;
  j["channels_only"] = c.channels_only;
  j["baseline_iterations"] = c.baseline.iterations;
  j["tuned_iterations"] = c.tuned.iterations;
  j["baseline_iteration_times_ms"] = c.baseline.iteration_ms;
  j["tuned_iteration_times_ms"] = c.tuned.iteration_ms;
  j["baseline_ranks"] = ranks(c.baseline);
  j["tuned_ranks"] = ranks(c.tuned);
  j["ranks_applying_plan"] = c.ranks_applying_plan;
  j["fallbacks"] = c.fallbacks;
  j["launches"] = c.launches;
  j["barrier_launches"] = c.barrier_launches;
  j["barrier_share"] = optional(c.barrier_share);
  j["watchdog"] = c.watchdog;
  return j;
}

std::string comparisonText(const Comparison& c) {
  std::string t;
  t += fmt::format("baseline {}  ({} ranks, iterations {}-{})\n", c.baseline.dir, c.baseline.ranks,
                   c.baseline.iterations.front(), c.baseline.iterations.back());
  t += fmt::format("tuned    {}  ({} ranks, iterations {}-{}){}\n", c.tuned.dir, c.tuned.ranks, c.tuned.iterations.front(),
                   c.tuned.iterations.back(), c.schedule.empty() ? "" : "\n         schedule: " + c.schedule);
  t += fmt::format("\n  iteration time      baseline {:9.3f} ms   tuned {:9.3f} ms   speedup {:.3f}x\n",
                   c.baseline.mean_iteration_ms, c.tuned.mean_iteration_ms, c.speedup);
  t += fmt::format("  (median)            baseline {:9.3f} ms   tuned {:9.3f} ms\n", c.baseline.median_iteration_ms,
                   c.tuned.median_iteration_ms);
  if (c.predicted_ms) {
    t += fmt::format("  predicted (plan)    {:9.3f} ms   error {:+.1f}%\n", *c.predicted_ms, 100.0 * *c.prediction_error);
  }
  if (c.ideal_ms) {
    t += fmt::format("  ideal bound         {:9.3f} ms", *c.ideal_ms);
    if (c.headroom_closed) t += fmt::format("   headroom closed {}", pct(*c.headroom_closed));
    t += "\n";
  }
  t += "\n  rank  exposed communication (ms/iteration)\n";
  for (std::size_t r = 0; r < c.baseline.exposed_communication_ms.size(); ++r) {
    const double after = r < c.tuned.exposed_communication_ms.size() ? c.tuned.exposed_communication_ms[r] : 0.0;
    t += fmt::format("  {:4}  {:9.3f} -> {:9.3f}\n", r, c.baseline.exposed_communication_ms[r], after);
  }
  t += "\n  gradients: ";
  if (!c.gradients_identical) {
    t += "not checked (" + c.gradients_note + ")\n";
  } else {
    t += (*c.gradients_identical ? "identical (" : "DIFFERENT (") + c.gradients_note + ")\n";
  }
  if (c.channels_only) {
    t += "  runtime: the plan sets NCCL channel counts only (through NCCL's tuner plugin); nothing was reordered\n";
  } else if (c.ranks_applying_plan >= 0) {
    t += fmt::format("  runtime: plan still applied at the end on {} of {} rank(s)\n", c.ranks_applying_plan, c.tuned.ranks);
    if (c.barrier_share) {
      t += fmt::format("  launches ordered as barriers: {} of {} ({})\n", c.barrier_launches, c.launches,
                       pct(*c.barrier_share));
    }
    for (const auto& [code, count] : c.fallbacks) t += fmt::format("  fallback {}: {} time(s)\n", code, count);
    for (const std::string& w : c.watchdog) t += "  watchdog: " + w + "\n";
  }
  return t;
}

}  // namespace syncopate::tuner
