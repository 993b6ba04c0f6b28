// syncopate record [--armed] [--backend auto|cupti|events] [--iteration-marker NAME] [--json]
//                  -o DIR -- CMD...
#include <ctime>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "syncopate/collector/record.hpp"

namespace {

namespace collector = syncopate::collector;

struct RecordArguments {
  std::string output;
  std::vector<std::string> command;
  bool armed = false;
  std::string backend = "auto";
  std::string iteration_marker = "ProfilerStep";
  bool json = false;
};

[[noreturn]] void fail(const std::string& message, int code) {
  std::cerr << "syncopate record: " << message << "\n";
  throw CLI::RuntimeError(code);
}

std::int64_t unixNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void run(const RecordArguments& arguments) {
  auto library = collector::findPreloadLibrary();
  if (!library.ok()) fail(library.message(), 1);
  collector::RecordOptions options;
  options.output_dir = arguments.output;
  options.command = arguments.command;
  options.armed = arguments.armed;
  options.backend = arguments.backend;
  options.iteration_marker = arguments.iteration_marker;
  options.preload_library = library.value();
  if (auto prepared = collector::prepareRunDirectory(options.output_dir); !prepared.ok()) fail(prepared.message(), 2);

  std::vector<std::string> warnings;
  collector::Environment environment = collector::recordEnvironment(options, collector::currentEnvironment(), warnings);
  for (const std::string& warning : warnings) std::cerr << "syncopate record: warning: " << warning << "\n";
  if (auto written = collector::writeStartMeta(options, unixNs()); !written.ok()) fail(written.message(), 1);
  std::cerr << "syncopate record: recording into " << options.output_dir.string() << " (backend " << options.backend
            << (options.armed ? ", armed: `syncopate attach " + options.output_dir.string() + " --iterations N` starts it"
                              : std::string())
            << ")\n";

  auto exit_code = collector::runCommand(options.command, environment);
  if (!exit_code.ok()) fail(exit_code.message(), 127);

  auto summary = collector::summarizeRun(options.output_dir);
  if (!summary.ok()) fail(summary.message(), 1);
  if (auto written = collector::writeEndMeta(options.output_dir, summary.value()); !written.ok()) {
    std::cerr << "syncopate record: warning: meta.json not completed: " << written.message() << "\n";
  }
  const collector::RecordSummary& s = summary.value();
  for (const std::string& problem : s.problems) std::cerr << "syncopate record: warning: " << problem << "\n";
  if (arguments.json) {
    nlohmann::json out{{"directory", options.output_dir.string()}, {"exit_code", exit_code.value()},
                       {"stores", s.stores}, {"ranks", s.ranks}, {"hosts", s.hosts},
                       {"backends", s.backends}, {"backend_reasons", s.backend_reasons}, {"counters", s.counters}};
    std::cout << out.dump(2) << "\n";
  } else {
    std::cerr << "syncopate record: " << s.stores << " store(s) in " << options.output_dir.string();
    for (const auto& [backend, count] : s.backends) std::cerr << ", " << count << " timed with " << backend;
    std::cerr << "\n";
    for (const auto& [name, value] : s.counters) {
      std::cerr << "syncopate record: note: " << name << " = " << value << " (summed over the stores)\n";
    }
  }
  if (exit_code.value() != 0) {
    std::cerr << "syncopate record: the command exited with " << exit_code.value() << "\n";
    throw CLI::RuntimeError(exit_code.value());
  }
  if (s.stores == 0 && !options.armed) {
    fail("nothing was recorded: no process of the command used CUDA (is it linked against the shared CUDA runtime?)", 1);
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
  command->add_flag("--json", arguments->json, "print a machine-readable summary on stdout");
  command->add_option("command", arguments->command, "the job, after --")->required();
  command->callback([arguments] { run(*arguments); });
}
