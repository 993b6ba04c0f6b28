// What a rank needs before it joins a communicator: simgpu's machine (started on first use),
// the cost model from its profile, the timeouts and geometry from the environment, and the
// communicator's configuration (ncclConfig_t of the NCCL 2.28 header, read up to its size).
#pragma once

#include "comm_state.hpp"

#include <nccl.h>

namespace simgpu::nccl {

// simgpu's machine is up (its profile loaded): ncclUnhandledCudaError otherwise.
Status coreReady(const char* api);
// The emulated host of a rank numbered `rank` in a communicator made by InitRank/InitAll.
int hostOfRank(int rank);
// `config` may be null (defaults, or `inherit` when given).
Status readConfig(const char* api, const ncclConfig_t* config, const CommConfig* inherit, CommConfig* out);
Status makeJoinPlan(const char* api, const CommKey& key, int nranks, int rank, int device, int host,
                    const CommConfig& config, JoinPlan* out);

}  // namespace simgpu::nccl
