// The NCCL communicators of this process, tracked from their creation whether recording or
// not, because what a collective row needs is decided there:
//  - comm_id, identical on every rank of the communicator: a hash of the ncclUniqueId(s) it
//    was created from; for ncclCommSplit/Shrink, of the parent's id, how many children the
//    parent had before (every rank of the parent calls split in the same order) and the color;
//    for ncclCommInitAll (all ranks in this process), of host, pid and a counter;
//  - the per-communicator sequence number, counted from the communicator's creation on every
//    call, so it matches across ranks even when recording starts in the middle (armed runs).
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
  std::int32_t rank = 0;
  std::int32_t size = 0;
  std::int32_t device = -1;
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
  // handle). Null if out of memory.
  CommState* add(ncclComm_t handle, std::uint64_t comm_id, std::int32_t rank, std::int32_t size,
                 std::uint64_t parent_comm_id, std::int64_t init_ns) noexcept;
  CommState* find(ncclComm_t handle) const noexcept;
  void remove(ncclComm_t handle) noexcept;

  // The catalog id of `comm` in `recorder`'s store (registered on first use).
  trace::CommId catalogId(Recorder& recorder, CommState& comm) noexcept;
};

CommRegistry& commRegistry() noexcept;

}  // namespace syncopate::preload
