// syncopate gui ...: runs the GUI's own executable, syncopate-gui beside this one, with the same
// arguments (docs/architecture.md, "The GUI is an executable of its own"): this executable, which
// every job's `syncopate record` starts, loads no Qt.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "command_support.hpp"
#include "commands.hpp"

namespace syncopate::cli {

namespace {

[[noreturn]] void runGui(const std::vector<std::string>& args) {
  const std::string gui = (executableDir() / "syncopate-gui").string();
  std::vector<char*> argv{const_cast<char*>(gui.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execv(gui.c_str(), argv.data());
  fail("gui", "cannot run " + gui + " (" + std::strerror(errno) +
                  "): the GUI is built with SYNCOPATE_BUILD_GUI=ON, and installed beside syncopate.");
}

}  // namespace

void addGuiCommand(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "gui", "Open a run in the timeline viewer (every rank's threads and streams, overlap and exposed "
             "communication, collectives, the critical path, metrics and the tuner's recommendation); two runs "
             "are shown one above the other, aligned on an iteration's start. `syncopate gui --help` for its "
             "options.");
  // Every argument after `gui`, --help included, is the GUI's to read.
  sub->prefix_command();
  sub->set_help_flag();
  sub->callback([sub] { runGui(sub->remaining()); });
}

}  // namespace syncopate::cli
