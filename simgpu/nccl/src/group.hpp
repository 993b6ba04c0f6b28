// NCCL's group semantics, per thread as in NCCL: between ncclGroupStart and the matching
// ncclGroupEnd (groups nest; only the outermost end acts) calls are only validated and
// recorded; the end joins pending communicators, then launches the recorded transfers
// together. An argument error inside a group is returned by its call and again by the end,
// which then launches nothing. Outside a group a call is a group of one.
#pragma once

#include "pending.hpp"

#include <nccl.h>

namespace simgpu::nccl {

ncclResult_t groupStart();
ncclResult_t groupEnd();
ncclResult_t groupSimulateEnd(ncclSimInfo_t* info);

ncclResult_t submitCall(PendingCall call);
// A collective NCCL completes without a kernel (a one-rank communicator): its copy, if any, goes
// on the stream at once, in a group or not, and nothing joins the group's launch.
ncclResult_t submitWithoutKernel(const PendingCall& call, std::size_t bytes);
ncclResult_t submitJoin(PendingJoin join);
// A call's argument error: printed, recorded for the group, returned.
ncclResult_t rejectCall(const Status& why);

bool inGroup();

// The profiler plugin's CollApi/P2pApi event of a call on `comm` (the parent of its later
// Coll/P2p event), inside the GroupApi event of the thread's group, which the first profiled
// call starts and the group's end stops. nullptr when the rank's plugin does not want it.
void* profileApiCall(CommState& comm, ncclProfilerEventDescr_v5_t descr);

// Runs joins now: blocking ones to the end (one thread each when there are several, since
// each may wait for the others), non-blocking ones in the background. Returns the first
// failure, else ncclInProgress if a non-blocking join is still running, else ncclSuccess.
ncclResult_t runJoins(std::vector<PendingJoin> joins);

}  // namespace simgpu::nccl
