// syncopate: one executable, one subcommand per cli/<name>_command.cpp (CONVENTIONS.md).
#include <CLI/CLI.hpp>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Syncopate: record, analyze and tune distributed GPU training jobs"};
  app.require_subcommand(1);
  addRecordCommand(app);
  addAttachCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // A command's failure arrives as CLI::RuntimeError carrying its exit code (already reported).
    return app.exit(error);
  }
  return 0;
}
