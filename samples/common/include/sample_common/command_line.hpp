// The command line as both sample trainers build it: CLI11's app named after the program, to
// which each trainer adds its own options in the order its --help lists them; the options they
// share (the training loop's, the launch's, --list-configs); and how parsing ends: --help and
// --list-configs with text and exit 0, a bad command line with a message naming the program
// and exit 2.
#pragma once

#include "sample_common/launch_env.hpp"
#include "sample_common/parse_outcome.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace sample_common {

class TrainerCommandLine {
 public:
  // `description` heads --help; `program` names the program there and in every error.
  TrainerCommandLine(const std::string& program, const std::string& description);
  TrainerCommandLine(const TrainerCommandLine&) = delete;
  TrainerCommandLine& operator=(const TrainerCommandLine&) = delete;

  // Where the trainer adds its own options.
  CLI::App& app() { return app_; }

  // --iterations, --warmup, --seed (`seed_help` says what it seeds) and --lr.
  void addLoopOptions(int& iterations, int& warmup, std::uint64_t& seed, const std::string& seed_help, float& lr);
  // --bootstrap, --bootstrap-timeout and --watchdog; checkBootstrap() sets `bootstrap` after parse().
  void addLaunchOptions(BootstrapKind& bootstrap, double& bootstrap_timeout_s, double& watchdog_s);
  // --list-configs, after which parse() stops with `table()` for stdout.
  void addListConfigs(const std::string& help, std::function<std::string()> table);

  // A stop for --help, --list-configs or what CLI11 refuses; nullopt to go on checking.
  std::optional<ParseStop> parse(int argc, const char* const* argv);
  // Sets the BootstrapKind bound by addLaunchOptions from --bootstrap; a stop for an unknown name.
  std::optional<ParseStop> checkBootstrap();
  // A bad command line: "<program>: <what>", where to read the options, exit 2.
  ParseStop failure(const std::string& what) const;

 private:
  CLI::App app_;
  std::string bootstrap_name_ = "auto";
  BootstrapKind* bootstrap_ = nullptr;
  bool list_configs_ = false;
  std::function<std::string()> config_table_;
};

}  // namespace sample_common
