// syncopate export DIR --format chrome -o FILE
#include <fmt/format.h>

#include <memory>

#include "allocation_policy.hpp"
#include "command_support.hpp"
#include "commands.hpp"
#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/chrome_export.hpp"
#include "syncopate/analyzer/run_loader.hpp"

namespace syncopate::cli {

namespace {

struct ExportArgs {
  std::string dir;
  std::string format = "chrome";
  std::string out;
  std::string marker;
};

void run(const ExportArgs& args) {
  preferFewerPageFaultsForRun(args.dir);
  if (args.format != "chrome" && args.format != "perfetto")
    fail("export", "unknown format '" + args.format + "'; the formats are: chrome (Chrome/Perfetto trace JSON)");
  Progress progress("export");
  analyzer::LoadOptions load;
  load.progress = [&](std::string_view what, std::size_t done, std::size_t total) { progress(what, done, total); };
  auto model = analyzer::loadRun(args.dir, load);
  progress.finish();
  if (!model) fail("export", model.message());
  analyzer::AnalysisOptions options;
  options.iterations.marker = args.marker;
  auto analysis = analyzer::analyze(*model, options);
  if (!analysis) fail("export", analysis.message());
  auto stats = analyzer::exportChromeTrace(*model, &*analysis, args.out);
  if (!stats) fail("export", stats.message());
  fmt::print("wrote {}: {} events, {} flows (open it in https://ui.perfetto.dev or chrome://tracing)\n", args.out,
             stats->events, stats->flows);
}

}  // namespace

void addExportCommand(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* sub = app.add_subcommand("export", "Write a run as a trace other tools open (Chrome/Perfetto JSON)");
  sub->add_option("dir", args->dir, "run directory")->required();
  sub->add_option("--format", args->format, "output format: chrome")->capture_default_str();
  sub->add_option("-o,--output", args->out, "file to write")->required();
  sub->add_option("--iteration-marker", args->marker, "as for analyze: the NVTX range that marks an iteration");
  sub->callback([args] { run(*args); });
}

}  // namespace syncopate::cli
