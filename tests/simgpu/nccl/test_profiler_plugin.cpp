// A profiler plugin for tests: it records every event simgpu's NCCL gives it.
#include "syncopate/plugin_abi/nccl_profiler_v5.h"
#include "test_profiler_log.hpp"

using simgpu::nccl::testing::ProfiledComm;
using simgpu::nccl::testing::ProfiledEvent;
using simgpu::nccl::testing::ProfilerLog;

extern "C" __attribute__((visibility("default"))) ProfilerLog* simgpuTestProfilerLog() {
  static ProfilerLog log;
  return &log;
}

namespace {

ncclResult_t init(void** context, std::uint64_t comm_id, int* mask, const char* name, int nodes, int nranks, int rank,
                  ncclDebugLogger_t) {
  auto* comm = new ProfiledComm{comm_id, name != nullptr ? name : "", nodes, nranks, rank, false};
  ProfilerLog* log = simgpuTestProfilerLog();
  std::lock_guard lock(log->mu);
  log->comms.push_back(comm);
  *context = comm;
  *mask = ncclProfileGroupApi | ncclProfileCollApi | ncclProfileP2pApi | ncclProfileKernelLaunch | ncclProfileColl |
          ncclProfileP2p | ncclProfileKernelCh;
  return ncclSuccess;
}

ncclResult_t startEvent(void*, void** handle, ncclProfilerEventDescr_v5_t* d) {
  auto* e = new ProfiledEvent;
  e->type = d->type;
  e->parent = static_cast<const ProfiledEvent*>(d->parentObj);
  e->rank = d->rank;
  switch (d->type) {
    case ncclProfileGroupApi: e->group_depth = d->groupApi.groupDepth; break;
    case ncclProfileCollApi:
      e->func = d->collApi.func;
      e->count = d->collApi.count;
      e->datatype = d->collApi.datatype;
      e->peer_or_root = d->collApi.root;
      break;
    case ncclProfileP2pApi:
      e->func = d->p2pApi.func;
      e->count = d->p2pApi.count;
      e->datatype = d->p2pApi.datatype;
      break;
    case ncclProfileColl:
      e->func = d->coll.func;
      e->count = d->coll.count;
      e->datatype = d->coll.datatype;
      e->peer_or_root = d->coll.root;
      e->seq = d->coll.seqNumber;
      e->algo = d->coll.algo;
      e->channels = d->coll.nChannels;
      break;
    case ncclProfileP2p:
      e->func = d->p2p.func;
      e->count = d->p2p.count;
      e->datatype = d->p2p.datatype;
      e->peer_or_root = d->p2p.peer;
      break;
    case ncclProfileKernelCh: e->timer_start = d->kernelCh.pTimer; break;
    default: break;
  }
  ProfilerLog* log = simgpuTestProfilerLog();
  std::lock_guard lock(log->mu);
  log->events.push_back(e);
  *handle = e;
  return ncclSuccess;
}

ncclResult_t stopEvent(void* handle) {
  std::lock_guard lock(simgpuTestProfilerLog()->mu);
  static_cast<ProfiledEvent*>(handle)->stopped = true;
  return ncclSuccess;
}

ncclResult_t recordEventState(void* handle, ncclProfilerEventState_v5_t state, ncclProfilerEventStateArgs_v5_t* args) {
  std::lock_guard lock(simgpuTestProfilerLog()->mu);
  if (state == ncclProfilerKernelChStop) static_cast<ProfiledEvent*>(handle)->timer_stop = args->kernelCh.pTimer;
  return ncclSuccess;
}

ncclResult_t finalize(void* context) {
  std::lock_guard lock(simgpuTestProfilerLog()->mu);
  static_cast<ProfiledComm*>(context)->finalized = true;
  return ncclSuccess;
}

}  // namespace

extern "C" {
__attribute__((visibility("default"))) ncclProfiler_v5_t ncclProfiler_v5 = {
    "simgpu-test-profiler", init, startEvent, stopEvent, recordEventState, finalize};
}
