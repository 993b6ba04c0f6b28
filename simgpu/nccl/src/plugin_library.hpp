// What NCCL's plugin loaders (profiler, tuner) share: finding the library a variable names, and
// a logger that sends a plugin's warnings to stderr.
#pragma once

#include "syncopate/plugin_abi/nccl_plugin_log.h"

#include <cstdarg>
#include <string>

namespace simgpu::nccl {

// As NCCL: `variable` (NCCL_PROFILER_PLUGIN) unset tries libnccl-<kind>.so silently, "none"
// disables, NAME means libnccl-<kind>-NAME.so, anything else is tried as given. Returns the
// dlopen handle (RTLD_NOW | RTLD_LOCAL), or nullptr; a named library that does not load is
// said on stderr.
void* openPluginLibrary(const char* variable, const char* kind);
// "NAME" or "libnccl-<kind>.so": how messages name the plugin.
std::string pluginLabel(const char* variable, const char* kind);

// A plugin's log line on stderr if it is a warning: "simgpu NCCL <kind> plugin (file:line): ...".
void logPluginWarning(const char* kind, ncclDebugLogLevel level, const char* file, int line, const char* fmt,
                      va_list args);

}  // namespace simgpu::nccl
