#include "sample_common/command_line.hpp"

#include "sample_common/exit_codes.hpp"

#include <fmt/format.h>

#include <utility>

namespace sample_common {

TrainerCommandLine::TrainerCommandLine(const std::string& program, const std::string& description)
    : app_(description, program) {}

void TrainerCommandLine::addLoopOptions(int& iterations, int& warmup, std::uint64_t& seed,
                                        const std::string& seed_help, float& lr) {
  app_.add_option("--iterations", iterations, "Measured iterations")->check(CLI::PositiveNumber)->capture_default_str();
  app_.add_option("--warmup", warmup, "Iterations before the measured ones (checked, not summarised)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app_.add_option("--seed", seed, seed_help)->capture_default_str();
  app_.add_option("--lr", lr, "SGD learning rate")->check(CLI::PositiveNumber)->capture_default_str();
}

void TrainerCommandLine::addLaunchOptions(BootstrapKind& bootstrap, double& bootstrap_timeout_s, double& watchdog_s) {
  bootstrap_ = &bootstrap;
  app_.add_option("--bootstrap", bootstrap_name_,
                  "How ranks meet: auto (mpirun's environment, else RANK/WORLD_SIZE, else single), mpi, env, single")
      ->capture_default_str();
  app_.add_option("--bootstrap-timeout", bootstrap_timeout_s, "Seconds to wait for all ranks (env bootstrap)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app_.add_option("--watchdog", watchdog_s,
                  "Seconds without progress before the run stops with an error instead of hanging")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

void TrainerCommandLine::addListConfigs(const std::string& help, std::function<std::string()> table) {
  app_.add_flag("--list-configs", list_configs_, help);
  config_table_ = std::move(table);
}

std::optional<ParseStop> TrainerCommandLine::parse(int argc, const char* const* argv) {
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    ParseStop help;
    help.out = app_.help();
    return help;
  } catch (const CLI::ParseError& e) {
    return failure(e.what());
  }
  if (list_configs_) {
    ParseStop list;
    list.out = config_table_();
    return list;
  }
  return std::nullopt;
}

std::optional<ParseStop> TrainerCommandLine::checkBootstrap() {
  const std::optional<BootstrapKind> kind = parseBootstrapKind(bootstrap_name_);
  if (!kind) return failure(fmt::format("--bootstrap must be auto, mpi, env or single (got '{}')", bootstrap_name_));
  *bootstrap_ = *kind;
  return std::nullopt;
}

ParseStop TrainerCommandLine::failure(const std::string& what) const {
  ParseStop stop;
  stop.exit_code = kExitUsage;
  stop.err = fmt::format("{0}: {1}\nRun '{0} --help' for the options.\n", app_.get_name(), what);
  return stop;
}

}  // namespace sample_common
