#include "profiler.hpp"

#include "plugin_library.hpp"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>

namespace simgpu::nccl {
namespace {

void logToStderr(ncclDebugLogLevel level, unsigned long, const char* file, int line, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  logPluginWarning("profiler", level, file, line, fmt, args);
  va_end(args);
}

const ncclProfiler_v5_t* load() {
  void* library = openPluginLibrary("NCCL_PROFILER_PLUGIN", "profiler");
  if (library == nullptr) return nullptr;
  auto* plugin = static_cast<const ncclProfiler_v5_t*>(dlsym(library, "ncclProfiler_v5"));
  if (plugin == nullptr || plugin->init == nullptr || plugin->startEvent == nullptr || plugin->stopEvent == nullptr ||
      plugin->recordEventState == nullptr || plugin->finalize == nullptr) {
    std::fprintf(stderr, "simgpu NCCL: the profiler plugin %s has no complete ncclProfiler_v5 (the only version simgpu runs); "
                         "continuing without it\n", pluginLabel("NCCL_PROFILER_PLUGIN", "profiler").c_str());
    return nullptr;
  }
  return plugin;
}

}  // namespace

const ncclProfiler_v5_t* profilerPlugin() {
  static const ncclProfiler_v5_t* const plugin = load();
  return plugin;
}

ncclDebugLogger_t profilerLogger() { return logToStderr; }

void* startEvent(const RankProfiler& rank, ncclProfilerEventDescr_v5_t descr) {
  if (!rank.wants(static_cast<int>(descr.type))) return nullptr;
  void* handle = nullptr;
  if (profilerPlugin()->startEvent(rank.context, &handle, &descr) != ncclSuccess) return nullptr;
  return handle;
}

void stopEvent(const RankProfiler& rank, int type, void* handle) {
  if (handle != nullptr && rank.wants(type)) profilerPlugin()->stopEvent(handle);
}

void kernelChannel(const RankProfiler& rank, void* parent, int rank_number, std::uint64_t start_ns, std::uint64_t end_ns) {
  ncclProfilerEventDescr_v5_t descr{};
  descr.type = ncclProfileKernelCh;
  descr.parentObj = parent;
  descr.rank = rank_number;
  descr.kernelCh.channelId = 0;
  descr.kernelCh.pTimer = start_ns;
  void* handle = startEvent(rank, descr);
  if (handle == nullptr) return;
  ncclProfilerEventStateArgs_v5_t args{};
  args.kernelCh.pTimer = end_ns;
  profilerPlugin()->recordEventState(handle, ncclProfilerKernelChStop, &args);
  profilerPlugin()->stopEvent(handle);
}

const char* profilerTypeName(ncclDataType_t datatype) {
  switch (datatype) {
    case ncclInt8: return "ncclInt8";
    case ncclUint8: return "ncclUint8";
    case ncclInt32: return "ncclInt32";
    case ncclUint32: return "ncclUint32";
    case ncclInt64: return "ncclInt64";
    case ncclUint64: return "ncclUint64";
    case ncclFloat16: return "ncclFloat16";
    case ncclFloat32: return "ncclFloat32";
    case ncclFloat64: return "ncclFloat64";
    case ncclBfloat16: return "ncclBfloat16";
    case ncclFloat8e4m3: return "ncclFloat8e4m3";
    case ncclFloat8e5m2: return "ncclFloat8e5m2";
    default: return "ncclUnknown";
  }
}

}  // namespace simgpu::nccl
