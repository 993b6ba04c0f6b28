// syncopate tune DIR [--json] [--iteration-marker NAME] [--min-gain F] [--window N]
//                    [--interference C,M] [-o PLAN] [--no-delayed] [--memory-limit BYTES]
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <optional>

#include "allocation_policy.hpp"
#include "command_support.hpp"
#include "commands.hpp"
#include "syncopate/trace/json_text.hpp"
#include "syncopate/tuner/tune.hpp"

namespace syncopate::cli {

namespace {

struct TuneArgs {
  std::string dir;
  bool json = false;
  std::string marker;
  double min_gain = 0.02;
  int window = 6;
  std::vector<double> interference;
  std::string output;
  bool no_delayed = false;
  std::optional<std::uint64_t> memory_limit;
  std::optional<int> model_ranks;
};

void run(const TuneArgs& args) {
  tuner::TuneOptions options;
  options.iteration_marker = args.marker;
  options.search.min_gain = args.min_gain;
  options.search.include_delayed = !args.no_delayed;
  options.model.window_iterations = args.window;
  options.memory_limit = args.memory_limit;
  if (args.model_ranks) {
    if (*args.model_ranks < 1) fail("tune", "--model-ranks takes how many of the slowest ranks to model, at least 1");
    options.model_ranks = static_cast<std::size_t>(*args.model_ranks);
  }
  if (!args.interference.empty()) {
    if (args.interference.size() != 2) fail("tune", "--interference takes two values: COMPUTE,COMMUNICATION (e.g. 0.1,0.15)");
    options.model.compute_slowdown = args.interference[0];
    options.model.communication_slowdown = args.interference[1];
  }
  preferFewerPageFaultsForRun(args.dir);
  Progress progress("tune");
  auto report = tuner::tuneRun(args.dir, options, [&](std::string_view stage, std::size_t done, std::size_t total) {
    progress(stage, done, total);
  });
  progress.finish();
  if (!report.ok()) fail("tune", report.message());

  nlohmann::json doc = tuner::tuneReportJson(*report);
  const std::filesystem::path plan_path =
      args.output.empty() ? std::filesystem::path(args.dir) / "plan.json" : std::filesystem::path(args.output);
  if (report->plan) {
    tuner::Plan plan = *report->plan;
    if (trace::Status s = tuner::writePlan(plan, plan_path); !s) fail("tune", s.message());
    doc["plan_file"] = plan_path.string();
    // The same channel counts for users who apply settings without Syncopate (NCCL's example tuner).
    if (!plan.channels.empty()) {
      const std::filesystem::path conf_path = plan_path.parent_path() / "nccl_tuner.conf";
      std::ofstream conf(conf_path, std::ios::trunc);
      if (!conf || !(conf << tuner::ncclTunerConf(plan.channels, plan.ranks, args.dir))) {
        fail("tune", fmt::format("cannot write {}: check that the directory is writable", conf_path.string()));
      }
      doc["nccl_tuner_conf"] = conf_path.string();
    }
  } else if (args.output.empty()) {
    // An older plan in the run directory must not be mistaken for this run's advice.
    std::error_code ignored;
    std::filesystem::remove(plan_path, ignored);
  }
  {
    std::ofstream out(std::filesystem::path(args.dir) / "tune.json", std::ios::trunc);
    if (!out || !(out << trace::jsonText(doc, 2) << "\n")) {
      fail("tune", fmt::format("cannot write {}/tune.json: check that the run directory is writable", args.dir));
    }
  }
  if (args.json) {
    fmt::print("{}\n", trace::jsonText(doc, 2));
    return;
  }
  fmt::print("{}", tuner::tuneReportText(*report));
  if (report->plan) {
    fmt::print("Plan: {}\nApply it: syncopate run --plan {} -o DIR2 -- <the same command>\n", plan_path.string(),
               plan_path.string());
  }
}

}  // namespace

void addTuneCommand(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* sub = app.add_subcommand(
      "tune",
      "Replay a recorded run under other gradient synchronisation schedules, rank them by predicted iteration time, "
      "and write the best as DIR/plan.json when it is predicted to gain enough; an imported trace is replayed as "
      "recorded, with its error on every iteration");
  sub->add_option("dir", args->dir, "run directory (recorded with syncopate record, or made by syncopate import)")
      ->required();
  sub->add_flag("--json", args->json, "print the report as JSON (also saved as DIR/tune.json)");
  sub->add_option("--iteration-marker", args->marker,
                  "NVTX range that marks an iteration (default: ProfilerStep#N, as `analyze`)");
  sub->add_option("--min-gain", args->min_gain, "least predicted gain (fraction) for a plan to be recommended")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  sub->add_option("--window", args->window, "consecutive iterations simulated together (at least 3)")
      ->check(CLI::Range(3, 64))
      ->capture_default_str();
  sub->add_option("--interference", args->interference,
                  "compute and communication slowdowns while they overlap, e.g. 0.1,0.15 (default: measured from the "
                  "run, else the prior in docs/tuner.md)")
      ->delimiter(',')
      ->expected(2);
  sub->add_option("-o,--output", args->output, "where to write the plan (default DIR/plan.json)");
  sub->add_flag("--no-delayed", args->no_delayed, "do not predict the one-step-delayed mode");
  sub->add_option("--memory-limit", args->memory_limit,
                  "device memory a plan may add for its fusion buffer, e.g. 2GiB (default: what the recording shows "
                  "every rank left free)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Validator(
          [](const std::string& bytes) {
            return bytes.find_first_not_of('0') == std::string::npos ? "a memory limit is at least one byte" : "";
          },
          "BYTES"));
  sub->add_option("--model-ranks", args->model_ranks,
                  "model only this many ranks, the slowest (those the others wait for, from DIR/analysis.sqlite: run "
                  "`syncopate analyze DIR` first); the others are taken to do what they do. Default: every rank, or "
                  "the 8 slowest of a run of more than 64 ranks that has been analysed");
  sub->callback([args] { run(*args); });
}

}  // namespace syncopate::cli
