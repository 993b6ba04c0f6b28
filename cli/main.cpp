// The `syncopate` executable: a CLI11 app whose subcommands live in <name>_command.cpp
// (CONVENTIONS.md).
#include <CLI/CLI.hpp>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Syncopate: profile distributed GPU training jobs, find where the time goes, and tune their "
               "gradient synchronisation."};
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A command's failure arrives as CLI::RuntimeError carrying its exit code (already reported).
    return app.exit(e);
  }
  return 0;
}
