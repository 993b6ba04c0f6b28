// syncopate compare DIR DIR2 [--json] [--iteration-marker NAME]
#include <fmt/format.h>

#include <memory>

#include "command_support.hpp"
#include "commands.hpp"
#include "syncopate/trace/json_text.hpp"
#include "syncopate/tuner/compare.hpp"

namespace syncopate::cli {

namespace {

struct CompareArgs {
  std::string baseline, tuned;
  bool json = false;
  std::string marker;
};

void run(const CompareArgs& args) {
  tuner::CompareOptions options;
  options.iteration_marker = args.marker;
  auto comparison = tuner::compareRuns(args.baseline, args.tuned, options);
  if (!comparison.ok()) fail("compare", comparison.message());
  if (args.json) {
    fmt::print("{}\n", trace::jsonText(tuner::comparisonJson(*comparison), 2));
  } else {
    fmt::print("{}", tuner::comparisonText(*comparison));
  }
  // Different gradients mean the tuned run is wrong: say so with the exit code too.
  if (comparison->gradients_identical && !*comparison->gradients_identical) {
    fail("compare", "the tuned run's gradients differ from the baseline's (" + comparison->gradients_note + ")");
  }
}

}  // namespace

void addCompareCommand(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* sub = app.add_subcommand(
      "compare", "Compare a tuned run (syncopate run --plan) with its baseline: iteration times, speedup, the plan's "
                 "prediction and its error, exposed communication per rank, identical gradients");
  sub->add_option("baseline", args->baseline, "the baseline run directory")->required();
  sub->add_option("tuned", args->tuned, "the tuned run directory")->required();
  sub->add_flag("--json", args->json, "print the comparison as JSON (fields in docs/tuner.md)");
  sub->add_option("--iteration-marker", args->marker, "NVTX range that marks an iteration (as `analyze`)");
  sub->callback([args] { run(*args); });
}

}  // namespace syncopate::cli
