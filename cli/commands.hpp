// One function per subcommand, each in cli/<name>_command.cpp; main.cpp calls each once
// (CONVENTIONS.md, "The command line"). A command that fails prints `syncopate <cmd>: <what was
// wrong and what to do>` on stderr and exits non-zero.
#pragma once

#include <CLI/CLI.hpp>

void addRecordCommand(CLI::App& app);
void addAttachCommand(CLI::App& app);

namespace syncopate::cli {

void addAnalyzeCommand(CLI::App& app);
void addImportCommand(CLI::App& app);
void addExportCommand(CLI::App& app);
void addTuneCommand(CLI::App& app);
void addRunCommand(CLI::App& app);
void addCompareCommand(CLI::App& app);
void addDemoCommand(CLI::App& app);

}  // namespace syncopate::cli
