// syncopate: one executable, one subcommand per cli/<name>_command.cpp (docs/architecture.md,
// "Analysis results and the command line").
#include <CLI/CLI.hpp>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Syncopate: record, analyze and tune distributed GPU training jobs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", SYNCOPATE_VERSION);
  addRecordCommand(app);
  addAttachCommand(app);
  syncopate::cli::addAnalyzeCommand(app);
  syncopate::cli::addImportCommand(app);
  syncopate::cli::addExportCommand(app);
  syncopate::cli::addTuneCommand(app);
  syncopate::cli::addRunCommand(app);
  syncopate::cli::addCompareCommand(app);
  syncopate::cli::addDemoCommand(app);
#ifdef SYNCOPATE_WITH_GUI
  syncopate::cli::addGuiCommand(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // A command's failure arrives as CLI::RuntimeError carrying its exit code (already reported).
    return app.exit(error);
  }
  return 0;
}
