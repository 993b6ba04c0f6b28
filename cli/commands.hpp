// One function per subcommand; main.cpp calls each once (CONVENTIONS.md, "The command line").
#pragma once

#include <CLI/CLI.hpp>

namespace syncopate::cli {

void addAnalyzeCommand(CLI::App& app);
void addImportCommand(CLI::App& app);
void addExportCommand(CLI::App& app);
void addGuiCommand(CLI::App& app);  // gui_command.cpp, built with the GUI

}  // namespace syncopate::cli
