// NCCL's profiler plugin interface (simgpu/nccl/include/simgpu/nccl/nccl_profiler_v5.h): the
// plugin named by NCCL_PROFILER_PLUGIN, loaded once per process, and the events simgpu gives it.
#pragma once

#include "syncopate/plugin_abi/nccl_profiler_v5.h"

#include <cstdint>

namespace simgpu::nccl {

// The plugin, or nullptr: none asked for, "none", or one that cannot be used (said once on
// stderr: a plugin that does not load or lacks ncclProfiler_v5 must not go unnoticed).
const ncclProfiler_v5_t* profilerPlugin();
// The logger handed to the plugin's init: its warnings go to stderr.
ncclDebugLogger_t profilerLogger();

// One communicator rank's profiler context: what init returned.
struct RankProfiler {
  void* context = nullptr;
  int mask = 0;
  bool wants(int type) const { return context != nullptr && (mask & type) != 0; }
};

// Event helpers: each does nothing (and returns nullptr) unless the rank wants the type.
void* startEvent(const RankProfiler& rank, ncclProfilerEventDescr_v5_t descr);
void stopEvent(const RankProfiler& rank, int type, void* handle);
// A KernelCh event already over: started at start_ns and stopped at end_ns (model times).
void kernelChannel(const RankProfiler& rank, void* parent, int rank_number, std::uint64_t start_ns, std::uint64_t end_ns);

// NCCL's names of types, as a profiler plugin sees them ("ncclFloat32", ...).
const char* profilerTypeName(ncclDataType_t datatype);

}  // namespace simgpu::nccl
