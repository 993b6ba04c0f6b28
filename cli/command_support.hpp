// What every subcommand shares: the error convention (a message on stderr, a non-zero exit)
// and progress reports for work that takes more than a second.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace syncopate::cli {

// Prints "syncopate <command>: <message>" to stderr and ends the command with exit code 1.
[[noreturn]] void fail(std::string_view command, std::string_view message);

// The folder of the running executable, where the build and an install put what the commands
// run beside it (the GUI, the sample trainers); the working directory if /proc cannot say.
std::filesystem::path executableDir();

// Progress on stderr, shown only once the work has taken a second: a line rewritten in place
// on a terminal, a line per 10% step otherwise. Callable as an analyzer ProgressFn.
class Progress {
 public:
  explicit Progress(std::string_view command);
  ~Progress();
  void operator()(std::string_view what, std::size_t done, std::size_t total);
  void finish();  // ends the line on a terminal

 private:
  std::string command_;
  std::chrono::steady_clock::time_point start_;
  bool tty_ = false, shown_ = false;
  int last_step_ = -1;
};

}  // namespace syncopate::cli
