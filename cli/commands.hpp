// The subcommands; each lives in cli/<name>_command.cpp and registers itself on the app. A
// command that fails prints `syncopate <cmd>: <what was wrong and what to do>` on stderr and
// throws CLI::RuntimeError(exit code).
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
void addGuiCommand(CLI::App& app);  // gui_command.cpp, built with the GUI

}  // namespace syncopate::cli
