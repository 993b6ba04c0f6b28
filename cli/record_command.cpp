// syncopate record [--armed] [--backend auto|cupti|events] [--iteration-marker NAME] [--no-nccl-profiler] [--json]
//                  -o DIR -- CMD...
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "recorded_job.hpp"
#include "syncopate/trace/json_text.hpp"

namespace {

namespace collector = syncopate::collector;

struct RecordArguments {
  std::string output;
  std::vector<std::string> command;
  bool armed = false;
  std::string backend = "auto";
  std::string iteration_marker = "ProfilerStep";
  bool json = false;
  bool no_nccl_profiler = false;
};

void run(const RecordArguments& arguments) {
  syncopate::cli::RecordedJob job;
  job.options.output_dir = arguments.output;
  job.options.command = arguments.command;
  job.options.armed = arguments.armed;
  job.options.backend = arguments.backend;
  job.options.iteration_marker = arguments.iteration_marker;
  job.options.nccl_profiler = !arguments.no_nccl_profiler;
  job.quiet = arguments.json;
  const syncopate::cli::RecordedJobOutcome outcome = syncopate::cli::runRecordedJob(job);
  const collector::RecordSummary& s = outcome.summary;
  if (arguments.json) {
    nlohmann::json out{{"directory", arguments.output}, {"exit_code", outcome.exit_code},
                       {"stores", s.stores}, {"ranks", s.ranks}, {"hosts", s.hosts},
                       {"backends", s.backends}, {"backend_reasons", s.backend_reasons}, {"counters", s.counters},
                       {"nccl_profiler_loaded_stores", s.nccl_profiler_loaded},
                       {"cuda_device_max_connections", s.max_connections}};
    std::cout << syncopate::trace::jsonText(out, 2) << "\n";
  }
  if (outcome.exit_code != 0) {
    std::cerr << "syncopate record: the command exited with " << outcome.exit_code << "\n";
    throw CLI::RuntimeError(outcome.exit_code);
  }
}

}  // namespace

void addRecordCommand(CLI::App& app) {
  auto arguments = std::make_shared<RecordArguments>();
  CLI::App* command = app.add_subcommand(
      "record", "Run a command (a program, mpirun, torchrun, or one rank under srun) and record every process that uses CUDA");
  command->add_option("-o,--output", arguments->output, "run directory to write (one store per process, meta.json)")
      ->required();
  command->add_flag("--armed", arguments->armed,
                    "load the collector dormant; `syncopate attach DIR` makes every process record N iterations");
  command->add_option("--backend", arguments->backend, "GPU timing: auto (CUPTI when available), cupti or events")
      ->check(CLI::IsMember({"auto", "cupti", "events"}))
      ->capture_default_str();
  command->add_option("--iteration-marker", arguments->iteration_marker,
                      "NVTX range name that starts an iteration (armed runs)")
      ->capture_default_str();
  command->add_flag("--no-nccl-profiler", arguments->no_nccl_profiler,
                    "do not load the collector as NCCL's profiler plugin (NCCL_PROFILER_PLUGIN): no NCCL algorithm, "
                    "protocol or kernel-channel timing");
  command->add_flag("--json", arguments->json, "print a machine-readable summary on stdout");
  command->add_option("command", arguments->command, "the job, after --")->required();
  command->callback([arguments] { run(*arguments); });
}
