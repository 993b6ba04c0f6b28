#include "plugin_library.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace simgpu::nccl {

void* openPluginLibrary(const char* variable, const char* kind) {
  const char* setting = std::getenv(variable);
  if (setting != nullptr && std::strcmp(setting, "none") == 0) return nullptr;
  std::string candidates[2];
  if (setting == nullptr || *setting == '\0') {
    candidates[0] = std::string("libnccl-") + kind + ".so";
  } else {
    candidates[0] = std::string("libnccl-") + kind + "-" + setting + ".so";
    candidates[1] = setting;
  }
  std::string tried;
  for (const std::string& name : candidates) {
    if (name.empty()) continue;
    if (void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return library;
    tried += (tried.empty() ? "" : ", ") + name;
  }
  // Without the variable no plugin is expected; with it, its absence is news.
  if (setting != nullptr) std::fprintf(stderr, "simgpu NCCL: %s=%s: cannot load %s\n", variable, setting, tried.c_str());
  return nullptr;
}

std::string pluginLabel(const char* variable, const char* kind) {
  if (const char* setting = std::getenv(variable); setting != nullptr && *setting != '\0') return setting;
  return std::string("libnccl-") + kind + ".so";
}

void logPluginWarning(const char* kind, ncclDebugLogLevel level, const char* file, int line, const char* fmt,
                      va_list args) {
  if (level != NCCL_LOG_WARN && level != NCCL_LOG_ABORT) return;
  std::fprintf(stderr, "simgpu NCCL %s plugin (%s:%d): ", kind, file != nullptr ? file : "?", line);
  std::vfprintf(stderr, fmt, args);
  std::fputc('\n', stderr);
}

}  // namespace simgpu::nccl
