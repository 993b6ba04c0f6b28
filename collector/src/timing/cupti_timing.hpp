// GPU timing with CUPTI's activity API: kernels, memcpys and memsets are recorded by CUPTI
// itself (no extra work on the application's streams). Each call that issues GPU work is
// bracketed by a ticket pushed as CUPTI's external correlation id (kind CUSTOM0); CUPTI reports
// which of its API records ran under which external id, and each GPU activity under its API
// record's correlation id, so activities are joined to the recorder's ops
// (syncopate/collector/cupti_tickets.hpp, which also says why no ticket is ever given up).
// CUPTI's timestamps come from the recorder's clock (cuptiActivityRegisterTimestampCallback),
// so they are CLOCK_MONOTONIC like every other time in the store.
//
// libcupti.so.13 is loaded at run time, never linked: a process without it still runs (and
// falls back to CUDA events, saying why).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "syncopate/collector/timing_backend.hpp"

namespace syncopate::preload {

class CuptiTiming final : public TimingBackend {
 public:
  // Null, with `why` saying what failed, when CUPTI cannot be loaded or enabled.
  static std::unique_ptr<CuptiTiming> create(std::string& why) noexcept;
  ~CuptiTiming() override;

  const char* name() const noexcept override { return "cupti"; }
  Ticket begin(int device, cudaStream_t stream, std::uint32_t correlation) noexcept override;
  bool end(Ticket ticket, cudaStream_t stream, bool issued) noexcept override;
  void share(Ticket ticket, int extra_references) noexcept override;
  // Enables or disables the activity kinds (they are enabled once created).
  bool setCollecting(bool collecting) noexcept override;
  void collect() noexcept override;
  Resolution resolve(Ticket ticket, std::int64_t& start_ns, std::int64_t& end_ns) noexcept override;
  void release(Ticket ticket) noexcept override;
  void drain(std::int64_t deadline_ns) noexcept override;

  struct Impl;

 private:
  explicit CuptiTiming(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace syncopate::preload
