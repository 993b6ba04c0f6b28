// An NCCL that does nothing but call its profiler plugin the way NCCL does: what the cost of
// the collector's NCCL profiler plugin is measured against (nccl_profiler_bench.cpp). A
// benchmark fixture only. Like NCCL it loads NCCL_PROFILER_PLUGIN ("none" or unset: no plugin)
// at the first communicator's creation and calls its init; each ncclAllReduce then reports the
// events of one collective on one channel: CollApi (on the calling thread, inside the call),
// Coll under it, KernelCh under that with its start and stop timer, and the stops.
#include <dlfcn.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "syncopate/plugin_abi/nccl_profiler_v5.h"

namespace {

const ncclProfiler_v5_t* plugin = nullptr;
void* context = nullptr;
int mask = 0;
std::uint64_t seq = 0;

std::uint64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

void loadPlugin(int nranks, int rank) {
  const char* name = std::getenv("NCCL_PROFILER_PLUGIN");
  if (name == nullptr || std::strcmp(name, "none") == 0) return;
  void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library != nullptr) plugin = static_cast<const ncclProfiler_v5_t*>(dlsym(library, "ncclProfiler_v5"));
  if (plugin == nullptr || plugin->init(&context, 1, &mask, nullptr, 1, nranks, rank, nullptr) != ncclSuccess) {
    std::fprintf(stderr, "null NCCL: cannot use the profiler plugin %s\n", name);
    plugin = nullptr;
  }
}

void* start(ncclProfilerEventDescr_v5_t& descr) {
  void* handle = nullptr;
  if ((mask & static_cast<int>(descr.type)) != 0) plugin->startEvent(context, &handle, &descr);
  return handle;
}
void stop(void* handle) {
  if (handle != nullptr) plugin->stopEvent(handle);
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  *version = 22800;
  return ncclSuccess;
}
ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  std::memset(id, 7, sizeof *id);
  return ncclSuccess;
}
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId, int rank) {
  static int handle;
  *comm = reinterpret_cast<ncclComm_t>(&handle);
  if (plugin == nullptr) loadPlugin(nranks, rank);
  return ncclSuccess;
}
ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                           cudaStream_t stream) {
  if (plugin == nullptr) return ncclSuccess;
  ncclProfilerEventDescr_v5_t api{};
  api.type = ncclProfileCollApi;
  api.collApi.func = "AllReduce";
  api.collApi.count = count;
  api.collApi.datatype = "ncclFloat32";
  api.collApi.stream = stream;
  void* api_handle = start(api);
  ncclProfilerEventDescr_v5_t coll{};
  coll.type = ncclProfileColl;
  coll.parentObj = api_handle;
  coll.coll.seqNumber = seq++;
  coll.coll.func = "AllReduce";
  coll.coll.sendBuff = send;
  coll.coll.recvBuff = recv;
  coll.coll.count = count;
  coll.coll.datatype = "ncclFloat32";
  coll.coll.nChannels = 1;
  coll.coll.nWarps = 16;
  coll.coll.algo = "RING";
  coll.coll.proto = "LL";
  void* coll_handle = start(coll);
  ncclProfilerEventDescr_v5_t channel{};
  channel.type = ncclProfileKernelCh;
  channel.parentObj = coll_handle;
  channel.kernelCh.pTimer = nowNs();
  void* channel_handle = start(channel);
  if (channel_handle != nullptr) {
    ncclProfilerEventStateArgs_v5_t args{};
    args.kernelCh.pTimer = channel.kernelCh.pTimer + 1000;
    plugin->recordEventState(channel_handle, ncclProfilerKernelChStop, &args);
  }
  stop(channel_handle);
  stop(coll_handle);
  stop(api_handle);
  return ncclSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t) {
  if (plugin != nullptr) plugin->finalize(context);
  return ncclSuccess;
}

}  // extern "C"
