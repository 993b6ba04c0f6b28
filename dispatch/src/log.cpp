#include "syncopate/dispatch/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace syncopate::preload {
namespace {

int thresholdFromEnvironment() noexcept {
  const char* value = std::getenv("SYNCOPATE_LOG");
  if (value == nullptr) return static_cast<int>(LogLevel::Warn);
  if (std::strcmp(value, "error") == 0) return static_cast<int>(LogLevel::Error);
  if (std::strcmp(value, "info") == 0) return static_cast<int>(LogLevel::Info);
  if (std::strcmp(value, "debug") == 0) return static_cast<int>(LogLevel::Debug);
  return static_cast<int>(LogLevel::Warn);
}

int threshold() noexcept {
  static const int level = thresholdFromEnvironment();
  return level;
}

const char* levelWord(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::Error: return "error: ";
    case LogLevel::Warn: return "warning: ";
    case LogLevel::Info: return "";
    case LogLevel::Debug: return "debug: ";
  }
  return "";
}

}  // namespace

bool logEnabled(LogLevel level) noexcept { return static_cast<int>(level) <= threshold(); }

void log(LogLevel level, const char* format, ...) noexcept {
  if (!logEnabled(level)) return;
  char line[1024];
  int used = std::snprintf(line, sizeof line, "syncopate[%d]: %s", static_cast<int>(getpid()), levelWord(level));
  if (used < 0) return;
  va_list args;
  va_start(args, format);
  int more = std::vsnprintf(line + used, sizeof line - static_cast<size_t>(used) - 1, format, args);
  va_end(args);
  if (more < 0) return;
  size_t length = std::strlen(line);
  line[length++] = '\n';
  // One write so that lines of concurrent ranks do not interleave mid-line.
  ssize_t ignored = ::write(STDERR_FILENO, line, length);
  (void)ignored;
}

}  // namespace syncopate::preload
