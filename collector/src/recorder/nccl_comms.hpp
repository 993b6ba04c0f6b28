// The NCCL communicators of this process, tracked from their creation whether recording or
// not, because what a collective row needs is decided there:
//  - comm_id, identical on every rank of the communicator: a hash of the ncclUniqueId(s) it
//    was created from; for ncclCommSplit/Shrink, of the parent's id, how many children the
//    parent had before (every rank of the parent calls split in the same order) and the color;
//    for ncclCommInitAll (all ranks in this process), of host, pid and a counter;
//  - the per-communicator sequence number, counted from the communicator's creation on every
//    call, so it matches across ranks even when recording starts in the middle (armed runs).
// Its device (and, for a split, its rank and size) is asked of NCCL only once NCCL says the
// communicator is ready (ncclCommGetAsyncError: ncclSuccess), at its first recorded call: a
// communicator made inside ncclGroupStart/End is initialised by ncclGroupEnd, and a
// non-blocking one later still; NCCL answers nothing about it before (a real NCCL returns an
// error or an unset field, simgpu's waits for the initialisation).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "syncopate/dispatch/cuda_headers.hpp"
#include "syncopate/trace/ids.hpp"

namespace syncopate::preload {

class Recorder;

struct CommState {
  std::uint64_t comm_id = 0;
  // -1 until known (from the creating call's arguments, or from NCCL once it is ready).
  std::atomic<std::int32_t> rank{-1};
  std::atomic<std::int32_t> size{-1};
  std::atomic<std::int32_t> device{-1};
  std::atomic<bool> described{false};  // NCCL was asked, the communicator being ready
  std::uint64_t handle = 0;
  std::int64_t init_ns = 0;
  std::uint64_t parent_comm_id = 0;  // 0: none
  std::atomic<std::uint64_t> next_seq{0};
  std::atomic<std::uint32_t> children{0};        // splits/shrinks made from it so far
  std::atomic<std::uint64_t> catalog_entry{0};   // recorder generation << 32 | CommId
};

std::uint64_t hashBytes(const void* data, std::size_t size, std::uint64_t seed = 0) noexcept;
std::uint64_t combineHash(std::uint64_t a, std::uint64_t b) noexcept;

class CommRegistry {
 public:
  // Registers a communicator that was just created (replacing a destroyed one with the same
  // handle); rank and size -1 when the creating call does not say. Asks NCCL nothing. Null if
  // out of memory.
  CommState* add(ncclComm_t handle, std::uint64_t comm_id, std::int32_t rank, std::int32_t size,
                 std::uint64_t parent_comm_id, std::int64_t init_ns) noexcept;
  // Learns the device (and an unknown rank or size) from NCCL once the communicator is ready;
  // until then leaves them unknown and asks again at the next call. Never blocks.
  void describe(CommState& comm) noexcept;
  CommState* find(ncclComm_t handle) const noexcept;
  void remove(ncclComm_t handle) noexcept;

  // The catalog id of `comm` in `recorder`'s store (registered on first use).
  trace::CommId catalogId(Recorder& recorder, CommState& comm) noexcept;
};

CommRegistry& commRegistry() noexcept;

}  // namespace syncopate::preload
