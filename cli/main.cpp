// The `syncopate` executable: a CLI11 app whose subcommands live in <name>_command.cpp.
#include <CLI/CLI.hpp>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Syncopate: profile distributed GPU training jobs, find where the time goes, and tune their "
               "gradient synchronisation."};
  app.require_subcommand(1);
  app.set_version_flag("--version", SYNCOPATE_VERSION);
  syncopate::cli::addAnalyzeCommand(app);
  syncopate::cli::addImportCommand(app);
  syncopate::cli::addExportCommand(app);
#ifdef SYNCOPATE_WITH_GUI
  syncopate::cli::addGuiCommand(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
