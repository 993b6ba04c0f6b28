// Puts validated calls on their streams. The calls of one group that share a stream become
// one stream operation (as NCCL fuses a group into one kernel per stream), whose body runs
// all their transfers together on the stream's worker and reports the modelled timing.
#pragma once

#include "pending.hpp"

#include <vector>

namespace simgpu::nccl {

// `group_api` is the calls' GroupApi event: each stream operation gets a KernelLaunch event in it.
Status launchCalls(std::vector<PendingCall> calls, const GroupApiEvent& group_api);

// A collective NCCL runs without a kernel (runsWithoutKernel in api_collectives.cpp): out of
// place, the one device-to-device copy of sendbuff to recvbuff NCCL makes on the call's stream
// with its own CUDA runtime (no interposable cudaMemcpyAsync call); in place, nothing.
Status copyWithoutKernel(const PendingCall& call, std::size_t bytes);

// ncclGroupSimulateEnd: the modelled duration of the calls in microseconds, without running them.
float estimateMicroseconds(const std::vector<PendingCall>& calls);

}  // namespace simgpu::nccl
