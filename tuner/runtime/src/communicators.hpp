// The NCCL communicators the runtime knows: each with its twin, a communicator made with
// ncclCommSplit inside the original's creation that carries only the runtime's own agreement
// between ranks (it never appears in the recording). A communicator is known from its creation
// until the application ends it (ncclCommFinalize, ncclCommDestroy or ncclCommAbort): right
// before that call frees it, it is retired, and its twin ends with it. Nothing asks NCCL about
// a retired communicator again (a freed handle: a use after free on a real NCCL), and NCCL may
// hand its handle to a communicator made later, which is then another entry, with its own
// number and twin. Creation and retirement take a lock (any thread may do either); lookups read
// a published count and each slot's handle, and never block.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "syncopate/dispatch/cuda_headers.hpp"

namespace syncopate::preload {

class CommunicatorTable {
 public:
  struct Communicator {
    std::atomic<ncclComm_t> comm{nullptr};  // null: a free slot (its communicator retired)
    ncclComm_t twin = nullptr;  // for the runtime's agreement; null when it could not be made
    int rank = -1, size = 0;
    std::uint32_t index = kNoIndex;  // order of first use in a collective
    bool issued_on = false;          // the runtime issued an all-reduce on it (the scheduler's thread)
  };
  static constexpr std::uint32_t kNoIndex = 0xFFFFFFFFu;
  static constexpr int kMax = 64;

  // A communicator was made by the application (its twin is made now, while every rank is
  // inside the creation). False when the table is full: more than kMax at once (said).
  bool add(ncclComm_t comm, int rank, int nranks) noexcept;
  // The application is about to end `comm`: it is forgotten, and its twin ends the same way (every
  // rank ends the original, so every rank ends its twin there too): destroyed, or aborted with
  // `abort` (ncclCommAbort: the peers may be gone). Nothing when the table does not hold it.
  void retire(ncclComm_t comm, bool abort) noexcept;
  Communicator* find(ncclComm_t comm) noexcept;
  // Numbered in order of first use, as the what-if model numbers them in the recording. The
  // scheduler's thread only.
  std::uint32_t indexOf(ncclComm_t comm) noexcept;
  // Its size, asking NCCL for one the table does not hold.
  int sizeOf(ncclComm_t comm) noexcept;
  // The first communicator the runtime issued an all-reduce on that NCCL says has failed (its
  // asynchronous error: a peer died or left), with that error; null when none has. The
  // scheduler's thread.
  const Communicator* failedIssuedOn(ncclResult_t* error) noexcept;

 private:
  std::mutex creation_;  // held to add or retire
  Communicator comms_[kMax];
  std::atomic<int> count_{0};  // slots ever used: lookups look at these
  std::uint32_t next_index_ = 0;
};

}  // namespace syncopate::preload
