// What the recorder keeps per traced thread: its record ring (drained by the background
// thread), its block of correlation ids, caches that spare the hot path a lookup, the open NVTX
// push/pop ranges and the NCCL calls of an open group. Only its own thread touches it, except
// the ring's consumer side and `exited`.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "syncopate/dispatch/cuda_headers.hpp"
#include "syncopate/dispatch/launch_touches.hpp"
#include "syncopate/trace/ids.hpp"
#include "syncopate/trace/records.hpp"
#include "syncopate/trace/spsc_ring.hpp"

namespace syncopate::preload {

using Ring = trace::SpscRing<trace::Record>;

struct KernelInfo;

inline constexpr int kMaxNvtxDepth = 128;
inline constexpr int kMaxGroupOps = 512;
inline constexpr std::size_t kShapeCacheEntries = 256;

// A launch the thread recorded, its kernel and the shape it interned: a training step launches
// the same kernels with the same grids and blocks step after step, and both the registry's
// lookup of the kernel and the catalog's of the shape hash what the cache compares.
struct CachedShape {
  const void* launched = nullptr;      // the handle, driver function or stub the launch named; null: empty
  std::uint32_t registry_changes = 0;  // KernelRegistry::changes() when `kernel` was looked up
  std::uint32_t grid[3] = {};   // dim3's x, y, z
  std::uint32_t block[3] = {};
  const KernelInfo* kernel = nullptr;
  trace::ShapeId shape = trace::kNoShape;
};

// An open NVTX push/pop range; start_ns = 0: not recorded (pushed while not recording).
struct NvtxFrame {
  std::int64_t start_ns = 0;
  trace::StringId name_id = trace::kNoString;
  trace::StringId domain_id = trace::kNoString;
  std::uint32_t color = 0;
  bool has_color = false;
};

// A collective or send/recv issued inside ncclGroupStart/End: its GPU work is launched by
// ncclGroupEnd, so its records wait here until then (and are dropped if the group fails).
struct GroupedOp {
  trace::CollectiveRecord collective;
  trace::OpArgsRecord buffers;
  trace::OpRecord pending;  // gets its timing ticket at ncclGroupEnd
  cudaStream_t stream = nullptr;
  int device = 0;
  bool gpu_work = true;  // false: an empty collective, which NCCL drops (timed by stream order)
};

// Communicators a creating call made: `count` handles in `out` (ncclCommInitAll: rank i is
// out[i]), registered when their handles are there (inside a group: at its end).
struct PendingComms {
  ncclComm_t* out = nullptr;
  int count = 1;
  std::uint64_t comm_id = 0;
  std::int32_t rank = -1;  // -1: NCCL says, once the communicator is ready
  std::int32_t size = -1;
  std::uint64_t parent_comm_id = 0;
  std::int64_t start = 0;
};

struct ThreadState {
  std::uint64_t generation = 0;  // the recorder instance it belongs to (a forked child starts anew)
  std::unique_ptr<Ring> ring;
  trace::ThreadId thread_id = trace::kNoThread;
  std::int64_t tid = 0;

  std::uint32_t next_correlation = 0;
  std::uint32_t correlation_end = 0;

  int device = -1;  // the thread's current device as last seen; -1: ask the runtime

  // The last stream looked up (a training loop launches on the same one or two).
  std::uint64_t cached_stream_handle = ~std::uint64_t{0};
  int cached_stream_device = -1;
  trace::StreamId cached_stream_id = trace::kNoStream;
  // The launches last recorded, by what they named and their grid (direct-mapped;
  // launchedShape() in op_recording.cpp).
  CachedShape shapes[kShapeCacheEntries];
  // Where a launch's touches are found before they are written to the ring. Not on the stack:
  // 8 KB in the recording's frame kept it out of line and measured ~3 ns slower a launch
  // (docs/collector.md, "Figures").
  LaunchTouch touches[kMaxLaunchTouches];

  int nccl_depth = 0;  // > 0 inside an intercepted NCCL call: its own launches belong to it
  // The correlation id of the recorded collective or send/recv under way on this thread (0:
  // none): NCCL's profiler plugin reads it when NCCL starts the call's CollApi/P2pApi event.
  std::uint32_t nccl_call_correlation = 0;
  int group_depth = 0;
  std::uint32_t group_id = 0;
  int group_count = 0;
  GroupedOp group_ops[kMaxGroupOps];
  std::vector<PendingComms> group_comms;  // made inside the open group (cold path: may allocate)

  NvtxFrame nvtx[kMaxNvtxDepth];  // by push/pop level (the level itself is kept by the NVTX layer)

  std::atomic<bool> exited{false};  // set when the thread ends; its ring is drained, then freed
};

}  // namespace syncopate::preload
