// syncopate demo [-o DIR] [--json] [--sample dp_trainer|framework_trainer] [--mode MODE]
//                [--ranks N] [--iterations N] [--config NAME] [--micro-batch N] [--profile PATH]
//                [--with-overlap]
//
// The whole loop on simgpu, with a sample trainer: record it (dp_trainer in naive mode, or
// framework_trainer in naive or DDP mode), analyse, tune, re-run it with the plan, compare.
// Both runs are kept under DIR.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>

#include "command_support.hpp"
#include "commands.hpp"
#include "recorded_job.hpp"
#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/report.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/trace/json_text.hpp"
#include "syncopate/tuner/compare.hpp"
#include "syncopate/tuner/tune.hpp"

namespace syncopate::cli {

namespace {

struct DemoArgs {
  std::string output = "syncopate-demo";
  bool json = false;
  std::string sample = "dp_trainer";
  std::string mode = "naive";
  int ranks = 4;
  int iterations = 8;
  std::string config;   // empty: the sample's (sampleDefaults)
  int micro_batch = 0;  // 0: the sample's
  std::string profile;
  bool with_overlap = false;
};

// What differs between the samples the demo can run.
struct SampleDefaults {
  const char* config;
  int micro_batch;
  const char* profile;   // under share/syncopate/profiles
  std::vector<std::string> modes;
};

SampleDefaults sampleDefaults(const std::string& sample) {
  // dp_trainer: a GPT-1.3B step on the communication-heavy profile; framework_trainer: GPT-2
  // small's blocks on four hosts of one H100 each, its own profile (docs/framework_trainer.md).
  // framework_trainer's micro-batch is 32 sequences: at the preset's 16 the step is modelled at
  // 66 ms, about what a host of a 2-core machine under simgpu's real work takes to issue one,
  // and the device catches up with the host (docs/framework_trainer.md, "The demo").
  if (sample == "framework_trainer") {
    return {"gpt2-small-8k", 32, "h100-4-hosts-400g.json", {"naive", "ddp", "zero1", "fsdp"}};
  }
  return {"gpt-1.3b", 4, "comm-heavy.json", {"naive"}};
}

// Where the build put what the demo needs, next to this executable.
struct DemoFiles {
  std::filesystem::path trainer, simgpu, profile;
};

DemoFiles locate(const DemoArgs& args) {
  const std::filesystem::path bin = executableDir();
  DemoFiles f;
  f.trainer = bin / args.sample;
  f.simgpu = bin.parent_path() / "lib" / "simgpu";
  f.profile = args.profile.empty()
                  ? bin.parent_path() / "share" / "syncopate" / "profiles" / sampleDefaults(args.sample).profile
                  : std::filesystem::path(args.profile);
  if (!std::filesystem::exists(f.trainer)) {
    fail("demo", fmt::format("the sample trainer is not built next to this executable ({}): build the project with "
                             "scripts/build.sh",
                             f.trainer.string()));
  }
  if (!std::filesystem::exists(f.simgpu / "libcudart.so.13")) {
    fail("demo", fmt::format("simgpu is not built ({} has no libcudart.so.13): build the project with scripts/build.sh",
                             f.simgpu.string()));
  }
  if (!std::filesystem::exists(f.profile)) {
    fail("demo", fmt::format("the machine profile {} does not exist: pass one with --profile", f.profile.string()));
  }
  return f;
}

void say(const DemoArgs& args, const std::string& line) {
  if (!args.json) std::cerr << "syncopate demo: " << line << "\n";
}

std::vector<std::string> trainerCommand(const DemoArgs& args, const DemoFiles& f, const std::string& mode) {
  // Open MPI: more ranks than cores need --oversubscribe; shared memory between the ranks.
  std::vector<std::string> command{"mpirun",
          "-np",
          std::to_string(args.ranks),
          "--oversubscribe",
          "--bind-to",
          "none",
          "--mca",
          "btl",
          "self,vader",
          f.trainer.string(),
          "--mode",
          mode,
          "--config",
          args.config,
          "--iterations",
          std::to_string(args.iterations),
          "--warmup",
          "1"};
  if (args.micro_batch > 0) {
    command.push_back("--micro-batch");
    command.push_back(std::to_string(args.micro_batch));
  }
  return command;
}

void recordTrainer(const DemoArgs& args, const DemoFiles& f, const std::filesystem::path& dir, const std::string& mode,
                   const std::string& plan) {
  if (std::filesystem::exists(dir)) {
    std::error_code ec;
    if (!std::filesystem::is_empty(dir, ec)) {
      fail("demo", fmt::format("{} is not empty: remove it or choose another -o", dir.string()));
    }
  }
  RecordedJob job;
  job.command_name = "demo";
  job.quiet = true;
  job.echo_output = false;
  job.options.output_dir = dir;
  job.options.command = trainerCommand(args, f, mode);
  if (!plan.empty()) {
    if (auto prepared = collector::prepareRunDirectory(dir); !prepared.ok()) fail("demo", prepared.message());
    std::error_code ec;
    std::filesystem::copy_file(plan, dir / "plan.json", std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) fail("demo", fmt::format("cannot copy the plan into {}: {}", dir.string(), ec.message()));
    job.options.extra["SYNCOPATE_PLAN"] = std::filesystem::absolute(dir / "plan.json").lexically_normal().string();
    job.options.extra["SYNCOPATE_WATCHDOG_S"] = "120";
  }
  const RecordedJobOutcome outcome = runRecordedJob(job);
  if (outcome.exit_code != 0) {
    fail("demo", fmt::format("{} ({} mode) exited with {}; its output is in {}", args.sample, mode, outcome.exit_code,
                             (dir / jobLogName()).string()));
  }
}

void run(const DemoArgs& args) {
  const DemoFiles files = locate(args);
  // The trainer runs on simgpu: its libraries first, the profile, and Open MPI allowed to run
  // as root (CI containers) — set here, inherited by the job.
  const char* old_path = std::getenv("LD_LIBRARY_PATH");
  const std::string path = files.simgpu.string() + (old_path != nullptr && *old_path != '\0' ? std::string(":") + old_path : "");
  setenv("LD_LIBRARY_PATH", path.c_str(), 1);
  setenv("SIMGPU_PROFILE", std::filesystem::absolute(files.profile).c_str(), 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);

  const std::filesystem::path root = args.output;
  const std::filesystem::path baseline = root / "baseline", tuned = root / "tuned";
  say(args, fmt::format("[1/5] recording {} --mode {} ({}{}) on {} simulated GPUs ({}) into {}", args.sample, args.mode,
                        args.config, args.micro_batch > 0 ? fmt::format(", micro-batch {}", args.micro_batch) : "",
                        args.ranks, files.profile.filename().string(), baseline.string()));
  recordTrainer(args, files, baseline, args.mode, {});

  say(args, "[2/5] analysing the baseline");
  auto model = analyzer::loadRun(baseline);
  if (!model.ok()) fail("demo", model.message());
  auto analysis = analyzer::analyze(*model);
  if (!analysis.ok()) fail("demo", analysis.message());
  analyzer::ReportOptions report_options;
  report_options.run_dir = baseline.string();
  const nlohmann::json analysis_doc = analyzer::analysisToJson(*model, *analysis, report_options);
  if (trace::Status s = analyzer::writeAnalysisResults(baseline, *model, *analysis, analysis_doc); !s) {
    fail("demo", s.message());
  }
  if (!args.json) fmt::print("{}\n", analyzer::analysisToText(*model, *analysis, report_options));

  say(args, "[3/5] tuning: replaying the baseline under other schedules");
  Progress progress("demo");
  auto report = tuner::tuneRun(baseline, {}, [&](std::string_view stage, std::size_t done, std::size_t total) {
    progress(stage, done, total);
  });
  progress.finish();
  if (!report.ok()) fail("demo", report.message());
  {
    std::ofstream out(baseline / "tune.json", std::ios::trunc);  // as `syncopate tune` keeps it
    out << trace::jsonText(tuner::tuneReportJson(*report), 2) << "\n";
  }
  if (!args.json) fmt::print("{}\n", tuner::tuneReportText(*report));
  if (!report->plan) {
    // Nothing worth re-running: that is an answer too (a light-communication machine profile).
    say(args, "nothing to re-run: " + report->search.note);
    if (args.json) {
      nlohmann::json doc = tuner::tuneReportJson(*report);
      doc["sample"] = args.sample;
      doc["mode"] = args.mode;
      doc["plan"] = nullptr;
      fmt::print("{}\n", trace::jsonText(doc, 2));
    }
    return;
  }
  tuner::Plan plan = *report->plan;
  const std::filesystem::path plan_path = baseline / "plan.json";
  if (trace::Status s = tuner::writePlan(plan, plan_path); !s) fail("demo", s.message());

  say(args, fmt::format("[4/5] re-running the unchanged {} with {} into {}", args.sample, plan_path.string(),
                        tuned.string()));
  recordTrainer(args, files, tuned, args.mode, plan_path.string());

  std::optional<tuner::RunSummary> overlap;
  if (args.with_overlap) {
    say(args, "      and the hand-written overlap mode, for reference, into " + (root / "overlap").string());
    recordTrainer(args, files, root / "overlap", "overlap", {});
    auto s = tuner::summarizeRunDir(root / "overlap");
    if (!s.ok()) fail("demo", s.message());
    overlap = std::move(s).value();
  }

  say(args, "[5/5] comparing");
  auto comparison = tuner::compareRuns(baseline, tuned);
  if (!comparison.ok()) fail("demo", comparison.message());
  if (args.json) {
    nlohmann::json doc = tuner::comparisonJson(*comparison);
    doc["sample"] = args.sample;
    doc["mode"] = args.mode;
    // The tune's fitted collective costs, to hold against the machine profile's links.
    doc["collective_fits"] = tuner::tuneReportJson(*report)["collective_fits"];
    if (overlap) doc["overlap_mode_iteration_ms"] = overlap->mean_iteration_ms;
    fmt::print("{}\n", trace::jsonText(doc, 2));
  } else {
    fmt::print("{}", tuner::comparisonText(*comparison));
    if (overlap) {
      fmt::print("  hand-written overlap mode: {:.3f} ms per iteration ({}) \n", overlap->mean_iteration_ms, overlap->dir);
    }
    fmt::print("\nEverything is in {}: open it with `syncopate gui {}`, or compare again with `syncopate compare {} {}`.\n",
               root.string(), baseline.string(), baseline.string(), tuned.string());
  }
  if (comparison->gradients_identical && !*comparison->gradients_identical) {
    fail("demo", "the tuned run's gradients differ from the baseline's (" + comparison->gradients_note + ")");
  }
}

}  // namespace

void addDemoCommand(CLI::App& app) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* sub = app.add_subcommand(
      "demo", "The whole loop on simgpu: record a sample trainer (dp_trainer in naive mode, or framework_trainer), "
              "analyse, tune, re-run it with the plan and compare; both runs are kept under DIR");
  sub->add_option("-o,--output", args->output, "directory for the runs (DIR/baseline, DIR/tuned)")->capture_default_str();
  sub->add_flag("--json", args->json, "print the comparison as JSON (as `compare --json`)");
  sub->add_option("--sample", args->sample,
                  "the job: dp_trainer (hand-written, samples/dp_trainer) or framework_trainer (shaped like a PyTorch "
                  "DDP job, samples/framework_trainer)")
      ->check(CLI::IsMember({"dp_trainer", "framework_trainer"}))
      ->capture_default_str();
  sub->add_option("--mode", args->mode,
                  "the sample's synchronisation mode: naive, or ddp, zero1 or fsdp (framework_trainer only)")
      ->check(CLI::IsMember({"naive", "ddp", "zero1", "fsdp"}))
      ->capture_default_str();
  sub->add_option("--ranks", args->ranks, "simulated GPUs (MPI ranks)")->check(CLI::Range(2, 64))->capture_default_str();
  sub->add_option("--iterations", args->iterations, "measured iterations of each run (after one warm-up)")
      ->check(CLI::Range(4, 1000))
      ->capture_default_str();
  sub->add_option("--config", args->config,
                  "the sample's modelled model configuration (default: gpt-1.3b for dp_trainer, gpt2-small-8k for "
                  "framework_trainer)");
  sub->add_option("--micro-batch", args->micro_batch,
                  "sequences per rank per step (default: 4 for dp_trainer, 32 for framework_trainer)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--profile", args->profile,
                  "simgpu machine profile (default: samples/dp_trainer/profiles/comm-heavy.json for dp_trainer, "
                  "samples/framework_trainer/profiles/h100-4-hosts-400g.json for framework_trainer)");
  sub->add_flag("--with-overlap", args->with_overlap,
                "also record dp_trainer's hand-written overlap mode, for reference");
  sub->callback([args] {
    const SampleDefaults defaults = sampleDefaults(args->sample);
    if (std::find(defaults.modes.begin(), defaults.modes.end(), args->mode) == defaults.modes.end()) {
      fail("demo", fmt::format("{} has no --mode {} in the demo", args->sample, args->mode));
    }
    if (args->with_overlap && args->sample != "dp_trainer") fail("demo", "--with-overlap is dp_trainer's mode");
    if (args->config.empty()) args->config = defaults.config;
    if (args->micro_batch == 0) args->micro_batch = defaults.micro_batch;
    run(*args);
  });
}

}  // namespace syncopate::cli
