// The calls a training process makes, as the scheduler sees them.
//
// One vocabulary for both users of the scheduler (scheduler.hpp): the what-if model feeds it
// the calls of a recorded run, and the reordering runtime feeds it the calls it intercepts
// live. Because both go through the same decisions, a prediction describes exactly what the
// runtime will do.
//
// Everything here is plain data with no allocation: the runtime builds a Call on the stack of
// the intercepted function.
#pragma once

#include <cstdint>
#include <span>

#include "syncopate/trace/types.hpp"

namespace syncopate::tuner {

// What a call does, as far as ordering is concerned.
enum class CallKind : std::uint8_t {
  Kernel = 0,       // kernel launch: touches its pointer parameters
  Memcpy = 1,       // asynchronous copy: touches its destination and source ranges
  Memset = 2,
  Collective = 3,   // NCCL collective or send/recv
  EventRecord = 4,  // cudaEventRecord(event, stream)
  StreamWait = 5,   // cudaStreamWaitEvent(stream, event)
  StreamSync = 6,   // the host waits for a stream (cudaStreamSynchronize)
  EventSync = 7,    // the host waits for an event (cudaEventSynchronize)
  DeviceSync = 8,   // the host waits for the whole device (cudaDeviceSynchronize, cudaFree, sync copies)
  StreamQuery = 9,  // cudaStreamQuery: answers "done?" without blocking
  Barrier = 10,     // anything whose effect cannot be proven (unknown API, graph launch): on
                    // `stream` if it names one, else on the whole device
  CaptureBegin = 11,  // graph capture starts on `stream`
  CaptureEnd = 12,
  GroupBegin = 13,  // ncclGroupStart
  GroupEnd = 14,    // ncclGroupEnd
  CommEnd = 15,     // ncclCommDestroy / ncclCommAbort / ncclCommFinalize, and process exit
  EventQuery = 16,  // cudaEventQuery: answers "done?" for an event without blocking
};

// A memory range an op reads or writes. bytes == 0 means a pointer whose extent is not known
// (a kernel's pointer parameter): it touches the synchronised tensor it points into.
struct Touch {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
};

// The arguments of an NCCL collective.
struct CollectiveArgs {
  std::uint64_t comm = 0;         // the communicator handle (the runtime's ncclComm_t)
  std::uint32_t comm_index = 0;   // which communicator of the process, in creation order
  std::int32_t comm_size = 0;
  trace::CollType type = trace::CollType::Unknown;
  trace::DataType dtype = trace::DataType::Unknown;
  trace::RedOp op = trace::RedOp::Unknown;
  std::int32_t root_or_peer = -1;
  std::uint64_t count = 0;        // elements
  std::uint64_t send = 0, recv = 0;  // device addresses
  std::uint64_t send_bytes() const;
  std::uint64_t recv_bytes() const;
};

// Whether `next` follows `previous` in memory, both its buffers: a bucket of such all-reduces is
// one call in place.
inline bool followsInMemory(const CollectiveArgs& previous, const CollectiveArgs& next) {
  return next.send == previous.send + previous.send_bytes() && next.recv == previous.recv + previous.recv_bytes();
}

// The collectives the scheduler holds and reschedules: the gradient all-reduces of data
// parallelism, and the reduce-scatters and all-gathers of sharded data parallelism (ZeRO,
// FSDP). Every other collective keeps its place.
inline bool rescheduled(trace::CollType type) {
  return type == trace::CollType::AllReduce || type == trace::CollType::ReduceScatter ||
         type == trace::CollType::AllGather;
}

// The collectives a plan may fuse: all of them. Fused all-reduces are one call on the members'
// concatenation (in place where the members are contiguous); fused reduce-scatters and
// all-gathers go through a fusion buffer laid out rank by rank (each rank's slices of the
// members side by side), since the per-rank slices of separate calls interleave across ranks.
inline bool fusible(trace::CollType type) { return rescheduled(type); }

// The collectives a plan may split into parts: all-reduces. A part of a reduce-scatter or an
// all-gather would take a range of every rank's slice at once, which no single call does.
inline bool splittable(trace::CollType type) { return type == trace::CollType::AllReduce; }

// A stream as the scheduler names it: the application's handle, or one of the runtime's own.
using StreamHandle = std::uint64_t;
inline constexpr StreamHandle kLegacyStream = 0;  // the legacy default stream (cudaStreamLegacy / 0)

struct Call {
  CallKind kind = CallKind::Kernel;
  std::uint32_t id = 0;             // the caller's name for this call (model: call index)
  StreamHandle stream = kLegacyStream;
  std::uint64_t event = 0;          // EventRecord / StreamWait / EventSync: the application's event
  std::span<const Touch> touches;   // Kernel, Memcpy, Memset
  bool unknown_pointers = false;    // Kernel: parameter layout unknown, may touch anything
  bool synchronous = false;         // Memcpy/Memset that also blocks the host (cudaMemcpy)
  // Collective: its stream synchronises with the legacy default stream (not created with
  // cudaStreamNonBlocking); taken as so when not known.
  bool blocking_stream = true;
  CollectiveArgs collective;        // Collective
};

std::string_view toString(CallKind kind);

}  // namespace syncopate::tuner
