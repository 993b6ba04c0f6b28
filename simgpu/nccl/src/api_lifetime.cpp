// A communicator after it is made: its properties, its asynchronous error, finalize, destroy
// and abort.
#include "api.hpp"
#include "comm_state.hpp"
#include "group.hpp"
#include "log.hpp"
#include "simgpu/core/stream_op.hpp"

#include <chrono>
#include <thread>

using namespace simgpu::nccl;

namespace {

// The state behind `comm` once its init has finished (NCCL joins the init thread before it
// reads a communicator's attributes), or the reason it cannot be used.
CommState* readyComm(ncclComm_t comm, const char* api, const void* out, Status* why) {
  CommState* state = commFromHandle(comm, api, why);
  if (state == nullptr) return nullptr;
  if (out == nullptr) {
    *why = Status::error(ncclInvalidArgument, std::string(api) + ": output argument is NULL");
    return nullptr;
  }
  if (Status st = state->waitInitialized(); !st.ok()) {
    *why = Status::error(st.code, std::string(api) + ": the communicator failed to initialise: " + st.message);
    return nullptr;
  }
  return state;
}

Status finalizeStop(CommState* state) {
  if (state->aborted()) return Status::error(ncclRemoteError, state->label() + " was aborted");
  return Status::success();
}

// Every operation issued so far has run its transfers, then its modelled duration.
Status drainIssued(CommState* state) {
  if (Status st = state->order.drain(state->plan().timeout_ns, [&] { return finalizeStop(state); }); !st.ok()) return st;
  const std::int64_t end = state->lastModelEnd();
  while (simgpu::nowNs() < end) std::this_thread::sleep_for(std::chrono::nanoseconds(end - simgpu::nowNs()));
  return Status::success();
}

}  // namespace

SIMGPU_NCCL_API(ncclResult_t, ncclCommCount, const ncclComm_t comm, int* count);
ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  Status why;
  CommState* state = readyComm(comm, "ncclCommCount", count, &why);
  if (state == nullptr) return fail(why);
  *count = state->nranks();
  return ncclSuccess;
}

SIMGPU_NCCL_API(ncclResult_t, ncclCommCuDevice, const ncclComm_t comm, int* device);
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  Status why;
  CommState* state = readyComm(comm, "ncclCommCuDevice", device, &why);
  if (state == nullptr) return fail(why);
  *device = state->device();
  return ncclSuccess;
}

SIMGPU_NCCL_API(ncclResult_t, ncclCommUserRank, const ncclComm_t comm, int* rank);
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  Status why;
  CommState* state = readyComm(comm, "ncclCommUserRank", rank, &why);
  if (state == nullptr) return fail(why);
  *rank = state->rank();
  return ncclSuccess;
}

SIMGPU_NCCL_API(ncclResult_t, ncclCommGetAsyncError, ncclComm_t comm, ncclResult_t* asyncError);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  Status why;
  CommState* state = commFromHandle(comm, "ncclCommGetAsyncError", &why);
  if (state == nullptr) return fail(why);
  if (asyncError == nullptr) return fail(ncclInvalidArgument, "ncclCommGetAsyncError: asyncError argument is NULL");
  *asyncError = state->initializing() ? ncclInProgress : state->asyncError();
  return ncclSuccess;
}

// Waits until every operation issued on the communicator has run to its modelled end (a
// non-blocking communicator reports ncclInProgress until then).
SIMGPU_NCCL_API(ncclResult_t, ncclCommFinalize, ncclComm_t comm);
ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  Status why;
  CommState* state = commFromHandle(comm, "ncclCommFinalize", &why);
  if (state == nullptr) return fail(why);
  if (Status st = state->waitInitialized(); !st.ok()) return fail(st.code, "ncclCommFinalize: " + st.message);
  std::shared_ptr<CommState> keep = comm->state;
  if (!keep->plan().config.blocking) {
    keep->setInProgress();
    std::thread([keep] {
      Status st = drainIssued(keep.get());
      if (st.ok()) keep->clearInProgress();
      else keep->recordFailure(st);
    }).detach();
    return ncclInProgress;
  }
  if (Status st = drainIssued(keep.get()); !st.ok()) {
    keep->recordFailure(st);
    return st.code;
  }
  const ncclResult_t state_now = keep->asyncError();
  return state_now == ncclInProgress ? ncclSuccess : state_now;
}

// Releases the handle. Operations already on streams keep the communicator alive until they
// have run; then this rank leaves (peers still waiting for it fail at once).
SIMGPU_NCCL_API(ncclResult_t, ncclCommDestroy, ncclComm_t comm);
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  Status why;
  if (commFromHandle(comm, "ncclCommDestroy", &why) == nullptr) return fail(why);
  comm->magic = 0;
  delete comm;
  return ncclSuccess;
}

SIMGPU_NCCL_API(ncclResult_t, ncclCommAbort, ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  Status why;
  CommState* state = commFromHandle(comm, "ncclCommAbort", &why);
  if (state == nullptr) return fail(why);
  state->abort();
  comm->magic = 0;
  delete comm;
  return ncclSuccess;
}
