// syncopate run --plan PLAN -o DIR2 [--backend auto|cupti|events] [--watchdog S] [--json] -- CMD...
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "command_support.hpp"
#include "commands.hpp"
#include "recorded_job.hpp"
#include "syncopate/trace/json_text.hpp"
#include "syncopate/tuner/plan.hpp"

namespace syncopate::cli {

namespace {

struct RunArgs {
  std::string plan;
  std::string output;
  std::vector<std::string> command;
  std::string backend = "auto";
  double watchdog_s = 300;
  bool json = false;
};

// What the runtime of each rank said at exit (runtime-rank-<R>.json).
nlohmann::json runtimeReports(const std::filesystem::path& dir) {
  nlohmann::json reports = nlohmann::json::array();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("runtime-", 0) != 0 || entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    try {
      reports.push_back(nlohmann::json::parse(in));
    } catch (const nlohmann::json::exception&) {
      reports.push_back({{"file", name}, {"error", "unreadable"}});
    }
  }
  return reports;
}

void run(const RunArgs& args) {
  auto plan = tuner::readPlan(args.plan);
  if (!plan.ok()) fail("run", plan.message());
  if (plan->changesTrainingMathematics()) {
    fail("run", "the plan uses the one-step-delayed mode, which changes the training mathematics; the runtime does not "
                "apply it. Make a plan without it (`syncopate tune` never recommends it)");
  }
  const std::filesystem::path dir = args.output;
  if (auto prepared = collector::prepareRunDirectory(dir); !prepared.ok()) fail("run", prepared.message());
  // The run keeps the plan it applied: compare reads its prediction, and every rank reads it.
  const std::filesystem::path kept = dir / "plan.json";
  std::error_code ec;
  if (std::filesystem::absolute(args.plan, ec) != std::filesystem::absolute(kept, ec)) {
    std::filesystem::copy_file(args.plan, kept, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) fail("run", fmt::format("cannot copy the plan into {}: {}", dir.string(), ec.message()));
  }

  RecordedJob job;
  job.command_name = "run";
  job.quiet = args.json;
  job.options.output_dir = dir;
  job.options.command = args.command;
  job.options.backend = args.backend;
  job.options.extra["SYNCOPATE_PLAN"] = std::filesystem::absolute(kept).lexically_normal().string();
  job.options.extra["SYNCOPATE_WATCHDOG_S"] = fmt::format("{:.0f}", args.watchdog_s);
  if (!args.json) {
    std::string what = plan->groups.empty() ? "the program's own schedule" : tuner::describe(plan->knobs);
    if (!plan->channels.empty()) what += ", NCCL channels " + tuner::channelRulesText(plan->channels);
    std::cerr << fmt::format("syncopate run: applying {} ({}), predicted {:.3f} ms per iteration\n", args.plan, what,
                             plan->prediction.iteration_ms);
  }
  const RecordedJobOutcome outcome = runRecordedJob(job);

  const nlohmann::json reports = runtimeReports(dir);
  int applied = 0;
  std::map<std::string, std::uint64_t> fallbacks;
  std::vector<std::string> watchdogs;
  for (const nlohmann::json& r : reports) {
    if (r.value("applied", false)) ++applied;
    if (r.contains("fallbacks") && r["fallbacks"].is_object()) {
      for (const auto& [code, f] : r["fallbacks"].items()) fallbacks[code] += f.value("count", std::uint64_t{0});
    }
    if (r.contains("watchdog") && r["watchdog"].is_string()) watchdogs.push_back(r["watchdog"].get<std::string>());
  }
  if (args.json) {
    nlohmann::json out{{"directory", dir.string()},      {"exit_code", outcome.exit_code},
                       {"stores", outcome.summary.stores}, {"plan", kept.string()},
                       {"ranks_applying_plan", applied},   {"runtime", reports}};
    fmt::print("{}\n", trace::jsonText(out, 2));
  } else {
    if (plan->groups.empty()) {
      std::cerr << "syncopate run: the plan sets NCCL channel counts only, through NCCL's tuner plugin; the store's "
                   "nccl_ops rows say what each collective ran on\n";
    } else {
      std::cerr << fmt::format("syncopate run: the plan was still applied at the end on {} of {} rank(s)\n", applied,
                               reports.size());
    }
    for (const auto& [code, count] : fallbacks) {
      std::cerr << fmt::format("syncopate run: fallback {} happened {} time(s) (runtime-rank-*.json says why)\n", code,
                               count);
    }
    for (const std::string& w : watchdogs) std::cerr << "syncopate run: watchdog: " << w << "\n";
  }
  if (outcome.exit_code != 0) {
    std::cerr << "syncopate run: the command exited with " << outcome.exit_code << "\n";
    throw CLI::RuntimeError(outcome.exit_code);
  }
}

}  // namespace

void addRunCommand(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* sub = app.add_subcommand(
      "run", "Run the unchanged job with a plan from `syncopate tune`: the preloaded runtime reschedules its gradient "
             "synchronisation as the plan says, and the run is recorded like `syncopate record`");
  sub->add_option("--plan", args->plan, "the plan (DIR/plan.json from syncopate tune)")->required();
  sub->add_option("-o,--output", args->output, "run directory to write (stores, meta.json, job.log, the plan, runtime reports)")
      ->required();
  sub->add_option("--backend", args->backend, "GPU timing: auto (CUPTI when available), cupti or events")
      ->check(CLI::IsMember({"auto", "cupti", "events"}))
      ->capture_default_str();
  sub->add_option("--watchdog", args->watchdog_s,
                  "seconds without progress of the rescheduled collectives before every rank stops with an error")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  sub->add_flag("--json", args->json, "print a machine-readable summary on stdout");
  sub->add_option("command", args->command, "the job, after --")->required();
  sub->callback([args] { run(*args); });
}

}  // namespace syncopate::cli
