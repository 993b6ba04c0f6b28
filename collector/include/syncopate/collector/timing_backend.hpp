// How GPU start/end times are obtained for the ops the recorder sees issued. Two backends
// fill the same rows: CUPTI's activity API (the default where it works) and CUDA events
// recorded around each op (the fallback, e.g. when another tool already holds CUPTI).
//
// The app thread brackets the real call that issues GPU work with begin()/end(); begin()
// returns a ticket that travels in the op's pending record (records.hpp's OpRecord with
// start_ns = 0 and end_ns = ticket, private to the collector) to the background thread, which
// asks resolve() until the times are known and then release()s the ticket. Several ops may
// share one ticket (the NCCL calls of one group, launched together by ncclGroupEnd): share()
// adds references.
#pragma once

#include <cstdint>
#include <string>

#include "syncopate/dispatch/cuda_headers.hpp"

namespace syncopate::preload {

using Ticket = std::uint64_t;
inline constexpr Ticket kNoTicket = 0;

enum class Resolution : std::uint8_t { Pending, Resolved, Failed };

class TimingBackend {
 public:
  virtual ~TimingBackend() = default;

  virtual const char* name() const noexcept = 0;  // "cupti" | "events"

  // App thread. `stream` is the stream the work goes to as the runtime understands it
  // (cudaStreamPerThread rather than 0 for per-thread-default-stream calls); `device` is the
  // stream's device. kNoTicket: this op cannot be timed (the caller counts it).
  virtual Ticket begin(int device, cudaStream_t stream, std::uint32_t correlation) noexcept = 0;
  // After the real call; `issued` says whether it succeeded. False when the op could not be
  // timed after all (the ticket is then already released).
  virtual bool end(Ticket ticket, cudaStream_t stream, bool issued) noexcept = 0;
  virtual void share(Ticket ticket, int extra_references) noexcept = 0;
  // After cudaDeviceReset of `device` (its context, and whatever the backend made on it, is
  // gone): what the backend made there is made again when next needed. Tickets taken before
  // still resolve (or fail, when their events went with the context).
  virtual void deviceReset(int device) noexcept { (void)device; }

  // Whether GPU activity is to be collected at all. An armed process records nothing until a
  // window starts, and a backend that costs the application something per call while it
  // collects (CUPTI traces every API call and kernel once its activity kinds are enabled) stops
  // that until then. Called at window boundaries only, never on a call's path. False when
  // collection could not be started (the backend then hands out no ticket, and what is issued
  // goes untimed, counted).
  virtual bool setCollecting(bool collecting) noexcept {
    (void)collecting;
    return true;
  }

  // Background thread.
  virtual void collect() noexcept = 0;  // make progress: poll, flush buffers, re-anchor clocks
  virtual Resolution resolve(Ticket ticket, std::int64_t& start_ns, std::int64_t& end_ns) noexcept = 0;
  virtual void release(Ticket ticket) noexcept = 0;
  // release() of a ticket whose ops are written, which the backend may hold back until
  // publishReleases(), called once the pass over the resolved ops is over: a ticket freed is
  // soon taken again by an issuing thread, and freeing them one by one hands the free list (and
  // the slot just freed) back and forth between the two threads' cores on every op.
  virtual void releaseResolved(Ticket ticket) noexcept { release(ticket); }
  virtual void publishReleases() noexcept {}
  // At exit: bring everything issued so far to a resolvable state, waiting at most until
  // `deadline_ns` (CLOCK_MONOTONIC).
  virtual void drain(std::int64_t deadline_ns) noexcept = 0;
};

}  // namespace syncopate::preload
