// syncopate import kineto|nsys FILE... -o DIR
#include <fmt/format.h>

#include <filesystem>
#include <vector>

#include "allocation_policy.hpp"
#include "command_support.hpp"
#include "commands.hpp"
#include "syncopate/analyzer/importers.hpp"

namespace syncopate::cli {

namespace {

struct ImportArgs {
  std::vector<std::string> files;
  std::string out;
};

void printReport(const analyzer::ImportReport& report, const std::string& out) {
  for (const auto& s : report.stores) {
    fmt::print("{} -> {}  (rank {})\n", s.source.filename().string(), s.file.string(), s.rank);
    fmt::print("  {} source events: {} ops, {} API calls, {} NVTX ranges, {} collectives, {} allocations\n",
               s.source_events, s.ops, s.api_calls, s.nvtx_ranges, s.collectives, s.allocations);
    for (const auto& c : s.categories) fmt::print("    {:<28} {:>9}  {}\n", c.what, c.events, c.stored_as);
    if (s.derived_event_records > 0)
      fmt::print("  {} event record ops reconstructed from synchronization records\n", s.derived_event_records);
    for (const auto& w : s.warnings) fmt::print("  warning: {}\n", w);
  }
  fmt::print("imported {} store(s) into {}; analyse with: syncopate analyze {}\n", report.stores.size(), out, out);
}

void addFormat(CLI::App& import, const char* name, const char* description, bool kineto) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* sub = import.add_subcommand(name, description);
  sub->add_option("files", args->files, "trace files, one per rank (or process)")->required();
  sub->add_option("-o,--output", args->out, "run directory to create the stores in")->required();
  sub->callback([args, kineto] {
    std::vector<std::filesystem::path> files(args->files.begin(), args->files.end());
    preferFewerPageFaults();
    Progress progress("import");
    analyzer::ImportOptions options;
    options.progress = [&](std::string_view what, std::size_t done, std::size_t total) { progress(what, done, total); };
    auto report = kineto ? analyzer::importKineto(files, args->out, options) : analyzer::importNsys(files, args->out, options);
    progress.finish();
    if (!report) fail("import", report.message());
    printReport(*report, args->out);
  });
}

}  // namespace

void addImportCommand(CLI::App& app) {
  CLI::App* import = app.add_subcommand("import", "Turn other profilers' traces into a Syncopate run directory");
  import->require_subcommand(1);
  addFormat(*import, "kineto", "PyTorch profiler / Kineto Chrome traces (.json or .json.gz), one file per rank", true);
  addFormat(*import, "nsys", "Nsight Systems SQLite exports (nsys export --type sqlite), one file per process", false);
}

}  // namespace syncopate::cli
