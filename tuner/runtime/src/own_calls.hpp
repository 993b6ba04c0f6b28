// The runtime's own calls: those it makes itself (and whatever NCCL or the recorder make inside
// them) reach the layer below untouched, never the scheduler. A per-thread depth, raised for
// the length of such a call.
#pragma once

#include <cstdint>

namespace syncopate::preload {

// True while this thread is inside a call the runtime makes itself.
bool insideOwnCall() noexcept;

class OwnCall {
 public:
  OwnCall() noexcept;
  ~OwnCall();
  OwnCall(const OwnCall&) = delete;
  OwnCall& operator=(const OwnCall&) = delete;
};

// CLOCK_MONOTONIC, in ns.
std::int64_t monotonicNowNs() noexcept;

}  // namespace syncopate::preload
