#include "recorded_job.hpp"

#include <cstdlib>
#include <ctime>
#include <iostream>

#include <CLI/CLI.hpp>

#include "command_support.hpp"
#include "syncopate/tuner/work_queues.hpp"

namespace syncopate::cli {

namespace {

// The exit codes `syncopate record` has always used: 2 for an unusable run directory, 127 for a
// command that cannot be started, 1 for the rest.
[[noreturn]] void failWith(const std::string& name, const std::string& message, int code) {
  std::cerr << "syncopate " << name << ": " << message << "\n";
  throw CLI::RuntimeError(code);
}

std::int64_t unixNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Whether a CUDA_DEVICE_MAX_CONNECTIONS a store ran with is a count below CUDA's default of 8,
// the ones worth a note: streams then share queues that CUDA would have given them apart.
bool fewerQueuesThanCudasDefault(const std::string& value) {
  const std::optional<std::uint32_t> queues = tuner::connectionsCudaTakes(value);
  return queues && *queues < tuner::kCudaDefaultConnections;
}

}  // namespace

std::string jobLogName() {
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"}) {
    if (const char* rank = std::getenv(variable); rank != nullptr && *rank != '\0') {
      return std::string("job-") + rank + ".log";
    }
  }
  return collector::kJobLogFile;
}

RecordedJobOutcome runRecordedJob(const RecordedJob& job) {
  const std::string& name = job.command_name;
  collector::RecordOptions options = job.options;
  auto library = collector::findPreloadLibrary();
  if (!library.ok()) fail(name, library.message());
  options.preload_library = library.value();
  if (auto prepared = collector::prepareRunDirectory(options.output_dir); !prepared.ok()) {
    failWith(name, prepared.message(), 2);
  }

  std::vector<std::string> warnings;
  collector::Environment environment = collector::recordEnvironment(options, collector::currentEnvironment(), warnings);
  for (const std::string& warning : warnings) std::cerr << "syncopate " << name << ": warning: " << warning << "\n";
  if (auto written = collector::writeStartMeta(options, unixNs()); !written.ok()) fail(name, written.message());
  if (!job.quiet) {
    std::cerr << "syncopate " << name << ": recording into " << options.output_dir.string() << " (backend "
              << options.backend
              << (options.armed ? ", armed: `syncopate attach " + options.output_dir.string() + " --iterations N` starts it"
                                : std::string())
              << ")\n";
  }

  auto exit_code = collector::runCommand(
      collector::launcherCommand(options.command, environment, collector::currentEnvironment()), environment,
      options.output_dir / jobLogName(), job.echo_output);
  if (!exit_code.ok()) failWith(name, exit_code.message(), 127);

  auto summary = collector::summarizeRun(options.output_dir);
  if (!summary.ok()) fail(name, summary.message());
  if (auto written = collector::writeEndMeta(options.output_dir, summary.value()); !written.ok()) {
    std::cerr << "syncopate " << name << ": warning: meta.json not completed: " << written.message() << "\n";
  }
  RecordedJobOutcome outcome{exit_code.value(), summary.value()};
  const collector::RecordSummary& s = outcome.summary;
  for (const std::string& problem : s.problems) std::cerr << "syncopate " << name << ": warning: " << problem << "\n";
  if (!job.quiet) {
    std::cerr << "syncopate " << name << ": " << s.stores << " store(s) in " << options.output_dir.string();
    for (const auto& [backend, count] : s.backends) std::cerr << ", " << count << " timed with " << backend;
    std::cerr << "\n";
    for (const auto& [counter, value] : s.counters) {
      std::cerr << "syncopate " << name << ": note: " << counter << " = " << value << " (summed over the stores)\n";
    }
    for (const auto& [queues, stores] : s.max_connections) {
      if (!fewerQueuesThanCudasDefault(queues)) continue;
      std::cerr << "syncopate " << name << ": note: " << stores << " store(s) ran with CUDA_DEVICE_MAX_CONNECTIONS="
                << queues << ": their streams share " << queues
                << " hardware work queue(s), which can hold computation behind communication issued before it; "
                   "`syncopate tune " << options.output_dir.string()
                << "` predicts CUDA's default (docs/tuner.md, \"CUDA_DEVICE_MAX_CONNECTIONS\")\n";
    }
  }
  if (outcome.exit_code == 0 && s.stores == 0 && !options.armed) {
    fail(name, "nothing was recorded: no process of the command used CUDA (is it linked against the shared CUDA runtime?)");
  }
  return outcome;
}

}  // namespace syncopate::cli
