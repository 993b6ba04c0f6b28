// syncopate attach DIR (--iterations N | --seconds S) [--timeout S] [--json]
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "syncopate/collector/attach.hpp"
#include "syncopate/trace/json_text.hpp"

namespace {

namespace collector = syncopate::collector;

struct AttachArguments {
  std::string directory;
  std::int64_t iterations = 0;
  double seconds = 0.0;
  double timeout = 0.0;
  bool json = false;
};

void run(const AttachArguments& arguments) {
  collector::AttachOptions options;
  options.iterations = arguments.iterations;
  options.seconds = arguments.seconds;
  options.timeout_seconds = arguments.timeout;
  auto progress = [json = arguments.json](const std::string& line) {
    if (!json) std::cerr << "syncopate attach: " << line << "\n";
  };
  auto outcome = collector::attach(arguments.directory, options, progress);
  if (!outcome.ok()) {
    std::cerr << "syncopate attach: " << outcome.message() << "\n";
    throw CLI::RuntimeError(outcome.code() == syncopate::trace::StatusCode::InvalidArgument ? 2 : 1);
  }
  if (arguments.json) {
    nlohmann::json processes = nlohmann::json::array();
    for (const auto& p : outcome->processes) {
      processes.push_back({{"host", p.host}, {"pid", p.pid}, {"rank", p.rank},
                           {"recorded_iterations", p.recorded_iterations}});
    }
    const nlohmann::json outcome_json{{"request", outcome->request},
                                      {"first_iteration", outcome->first_iteration},
                                      {"processes", processes}};
    std::cout << syncopate::trace::jsonText(outcome_json, 2) << "\n";
  } else {
    std::cerr << "syncopate attach: done: " << outcome->processes.size() << " process(es) recorded";
    if (outcome->first_iteration >= 0) std::cerr << " from iteration " << outcome->first_iteration;
    std::cerr << " into " << arguments.directory << "\n";
  }
}

}  // namespace

void addAttachCommand(CLI::App& app) {
  auto arguments = std::make_shared<AttachArguments>();
  CLI::App* command = app.add_subcommand(
      "attach", "Make every armed process of a run (syncopate record --armed) record N iterations or S seconds");
  command->add_option("directory", arguments->directory, "the run directory given to `syncopate record --armed -o`")
      ->required();
  auto* iterations = command->add_option("--iterations", arguments->iterations, "iterations to record")
                         ->check(CLI::PositiveNumber);
  auto* seconds = command->add_option("--seconds", arguments->seconds, "seconds to record")->check(CLI::PositiveNumber);
  iterations->excludes(seconds);
  command->add_option("--timeout", arguments->timeout, "give up after this many seconds (default: from the plan)")
      ->check(CLI::PositiveNumber);
  command->add_flag("--json", arguments->json, "print a machine-readable summary on stdout");
  command->callback([arguments, iterations, seconds] {
    if (iterations->count() == 0 && seconds->count() == 0) {
      std::cerr << "syncopate attach: say how long to record: --iterations N or --seconds S\n";
      throw CLI::RuntimeError(2);
    }
    run(*arguments);
  });
}
