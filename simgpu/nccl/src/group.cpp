#include "group.hpp"

#include "launch.hpp"
#include "log.hpp"

#include <thread>
#include <utility>
#include <vector>

namespace simgpu::nccl {
namespace {

struct GroupState {
  int depth = 0;
  std::vector<PendingCall> calls;
  std::vector<PendingJoin> joins;
  Status error;
  // The profiler plugin's GroupApi event, with the context of the communicator that opened it.
  GroupApiEvent api_event;
};

thread_local GroupState t_group;

// The end of the outermost group: takes what it recorded and resets the thread's state.
GroupState takeGroup() {
  GroupState taken = std::move(t_group);
  t_group = GroupState{};
  return taken;
}

void endGroupApi(const GroupApiEvent& event) { stopEvent(event.profiler, ncclProfileGroupApi, event.handle); }

ncclResult_t failJoins(std::vector<PendingJoin>& joins, const Status& why) {
  for (PendingJoin& j : joins) {
    if (j.comm) j.comm->finishInit(why);
  }
  return why.code;
}

Status runJoin(PendingJoin& j) {
  Status st = j.join();
  if (j.comm) j.comm->finishInit(st);
  return st;
}

}  // namespace

bool inGroup() { return t_group.depth > 0; }

ncclResult_t groupStart() {
  ++t_group.depth;
  return ncclSuccess;
}

ncclResult_t runJoins(std::vector<PendingJoin> joins) {
  std::vector<PendingJoin> blocking;
  bool in_background = false;
  for (PendingJoin& j : joins) {
    if (j.blocking) {
      blocking.push_back(std::move(j));
    } else {
      in_background = true;
      std::thread([job = std::move(j)]() mutable { runJoin(job); }).detach();
    }
  }
  std::vector<Status> results(blocking.size());
  if (blocking.size() == 1) {
    results[0] = runJoin(blocking[0]);
  } else {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < blocking.size(); ++i) {
      threads.emplace_back([&, i] { results[i] = runJoin(blocking[i]); });
    }
    for (auto& t : threads) t.join();
  }
  for (const Status& st : results) {
    if (!st.ok()) return st.code;  // finishInit printed it
  }
  return in_background ? ncclInProgress : ncclSuccess;
}

ncclResult_t groupEnd() {
  if (t_group.depth == 0) return fail(ncclInvalidUsage, "ncclGroupEnd: not in a group (no matching ncclGroupStart)");
  if (--t_group.depth > 0) return ncclSuccess;
  GroupState g = takeGroup();
  if (!g.error.ok()) {
    endGroupApi(g.api_event);
    failJoins(g.joins, Status::error(g.error.code, "its group failed: " + g.error.message));
    return g.error.code;
  }
  const ncclResult_t joined = runJoins(std::move(g.joins));
  if (joined != ncclSuccess && joined != ncclInProgress) {
    endGroupApi(g.api_event);
    return joined;
  }
  Status launched;
  if (!g.calls.empty()) launched = launchCalls(std::move(g.calls), g.api_event);
  endGroupApi(g.api_event);
  if (!launched.ok()) return fail(launched);
  return joined;
}

ncclResult_t groupSimulateEnd(ncclSimInfo_t* info) {
  if (info == nullptr) return fail(ncclInvalidArgument, "ncclGroupSimulateEnd: simInfo argument is NULL");
  if (info->magic != 0x74685283 || info->size < sizeof(ncclSimInfo_t)) {
    return fail(ncclInvalidArgument, "ncclGroupSimulateEnd: simInfo was not initialised with NCCL_SIM_INFO_INITIALIZER");
  }
  if (t_group.depth == 0) return fail(ncclInvalidUsage, "ncclGroupSimulateEnd: not in a group (no matching ncclGroupStart)");
  if (--t_group.depth > 0) return ncclSuccess;
  GroupState g = takeGroup();
  endGroupApi(g.api_event);
  if (!g.error.ok()) {
    failJoins(g.joins, Status::error(g.error.code, "its group failed: " + g.error.message));
    return g.error.code;
  }
  const ncclResult_t joined = runJoins(std::move(g.joins));
  if (joined != ncclSuccess) return joined;
  info->estimatedTime = estimateMicroseconds(g.calls);
  return ncclSuccess;
}

ncclResult_t submitCall(PendingCall call) {
  if (inGroup()) {
    t_group.calls.push_back(std::move(call));
    return ncclSuccess;
  }
  // A call outside a group is a group of one (and so is its GroupApi event).
  std::vector<PendingCall> one;
  one.push_back(std::move(call));
  const GroupApiEvent event = std::exchange(t_group.api_event, GroupApiEvent{});
  const Status st = launchCalls(std::move(one), event);
  endGroupApi(event);
  if (!st.ok()) return fail(st);
  return ncclSuccess;
}

ncclResult_t submitWithoutKernel(const PendingCall& call, std::size_t bytes) {
  const Status st = copyWithoutKernel(call, bytes);
  if (!inGroup()) endGroupApi(std::exchange(t_group.api_event, GroupApiEvent{}));
  if (!st.ok()) return inGroup() ? rejectCall(st) : fail(st);
  return ncclSuccess;
}

ncclResult_t submitJoin(PendingJoin join) {
  if (inGroup()) {
    t_group.joins.push_back(std::move(join));
    return ncclSuccess;
  }
  std::vector<PendingJoin> one;
  one.push_back(std::move(join));
  return runJoins(std::move(one));
}

void* profileApiCall(CommState& comm, ncclProfilerEventDescr_v5_t descr) {
  GroupApiEvent& group = t_group.api_event;
  if (group.profiler.context == nullptr && comm.profiler.context != nullptr) {
    ncclProfilerEventDescr_v5_t open{};
    open.type = ncclProfileGroupApi;
    open.rank = comm.rank();
    open.groupApi.groupDepth = t_group.depth;
    group.profiler = comm.profiler;
    group.handle = startEvent(comm.profiler, open);
  }
  descr.parentObj = group.handle;
  descr.rank = comm.rank();
  void* handle = startEvent(comm.profiler, descr);
  stopEvent(comm.profiler, static_cast<int>(descr.type), handle);
  return handle;
}

ncclResult_t rejectCall(const Status& why) {
  if (inGroup() && t_group.error.ok()) t_group.error = why;
  return fail(why);
}

}  // namespace simgpu::nccl
