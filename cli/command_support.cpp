#include "command_support.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>

namespace syncopate::cli {

void fail(std::string_view command, std::string_view message) {
  std::fprintf(stderr, "syncopate %.*s: %.*s\n", static_cast<int>(command.size()), command.data(),
               static_cast<int>(message.size()), message.data());
  throw CLI::RuntimeError(1);
}

std::filesystem::path executableDir() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : self.parent_path();
}

Progress::Progress(std::string_view command)
    : command_(command), start_(std::chrono::steady_clock::now()), tty_(::isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() { finish(); }

void Progress::operator()(std::string_view what, std::size_t done, std::size_t total) {
  if (std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
  const int percent = total > 0 ? static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total)) : 0;
  if (tty_) {
    std::fprintf(stderr, "\rsyncopate %s: %.*s %3d%%\x1b[K", command_.c_str(), static_cast<int>(what.size()), what.data(),
                 percent);
  } else if (percent / 10 != last_step_) {
    last_step_ = percent / 10;
    std::fprintf(stderr, "syncopate %s: %.*s %d%%\n", command_.c_str(), static_cast<int>(what.size()), what.data(), percent);
  }
  shown_ = true;
}

void Progress::finish() {
  if (tty_ && shown_) std::fputc('\n', stderr);
  shown_ = false;
}

}  // namespace syncopate::cli
