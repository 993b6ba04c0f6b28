// The runtime's own agreement between ranks at a flush (tuner/agreement.hpp says how it reads):
// a max-all-reduce of (digest, ~digest) over a communicator's twin, through buffers, a stream
// and an event of its own that nothing records. The host polls rather than blocks, backing off,
// so that a failed peer ends the wait at once and the watchdog one that never ends.
#pragma once

#include <cstdint>

#include "syncopate/dispatch/cuda_headers.hpp"
#include "syncopate/tuner/agreement.hpp"
#include "watchdog.hpp"

namespace syncopate::preload {

class RankAgreement {
 public:
  struct Outcome {
    tuner::Agreement agreement = tuner::Agreement::Agreed;
    ncclResult_t failed = ncclSuccess;     // the twin's error, when it failed
    cudaError_t completion = cudaSuccess;  // the stream's, when it failed
    std::int64_t waited_ns = 0;
  };

  // Its buffers, stream and event, from the real runtime. False when one cannot be made.
  bool prepare() noexcept;
  // One agreement over `twin` on `digest`, the watchdog watching it.
  Outcome agree(ncclComm_t twin, std::uint64_t digest, Watchdog& watchdog) noexcept;

  // What agreeing cost this rank's host: calls, and time blocked in them.
  std::uint64_t calls() const noexcept { return calls_; }
  std::int64_t totalNs() const noexcept { return total_ns_; }
  std::int64_t maxNs() const noexcept { return max_ns_; }

 private:
  std::uint64_t* device_ = nullptr;
  std::uint64_t* host_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
  std::uint64_t calls_ = 0;
  std::int64_t total_ns_ = 0, max_ns_ = 0;
};

}  // namespace syncopate::preload
