// What an NCCL call leaves to do once its group ends (or at once, outside a group).
#pragma once

#include "comm_state.hpp"
#include "simgpu/nccl/collective_task.hpp"
#include "simgpu/nccl/p2p_task.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

namespace simgpu::nccl {

// A collective or a send/recv, validated, waiting to be put on its stream.
struct PendingCall {
  std::shared_ptr<CommState> comm;
  cudaStream_t stream = nullptr;
  bool is_p2p = false;
  CollectiveArgs coll;
  P2pArgs p2p;
  std::string_view kernel;  // the stream operation's name
  std::uint64_t bytes = 0;  // what it moves, for observers
  // For the profiler plugin: the call's CollApi/P2pApi event (parent of its Coll/P2p event),
  // NCCL's name of the call, and the collective's seqNumber.
  void* api_event = nullptr;
  const char* func = "";
  std::uint64_t seq = 0;
};

// The profiler plugin's GroupApi event of a group, and the context it belongs to.
struct GroupApiEvent {
  RankProfiler profiler;
  void* handle = nullptr;
};

// ncclCommInitRank(Config), ncclCommSplit or ncclCommShrink: `join` joins the communicator
// (it may block until the other ranks come). `comm` is null for a rank that only takes part
// in a split (NCCL_SPLIT_NOCOLOR).
struct PendingJoin {
  std::shared_ptr<CommState> comm;
  std::function<Status()> join;
  bool blocking = true;
};

}  // namespace simgpu::nccl
