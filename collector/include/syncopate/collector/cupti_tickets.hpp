// The CUPTI backend's tickets, and how CUPTI's activity records find them (the backend itself,
// which loads CUPTI and brackets calls, is timing/cupti_timing.cpp).
//
// A ticket is CUPTI's external correlation id (kind CUSTOM0) pushed around the call it times.
// CUPTI joins its own correlation ids to it in external-correlation records (one per API record;
// simgpu's, one per op), and each GPU activity carries one of its own correlation ids; so an
// activity finds its ticket through the record that names both, in whichever order they come.
//
// No ticket is given up because its activity is late: a collective legitimately waits as long as
// its slowest peer takes (a rank checkpointing, a straggler), and its kernel's record comes when
// it ends, however long after the call that is. A ticket stays pending until its activity comes
// or the recorder releases it (stream order proved it did no GPU work, or the store closed).
// Memory stays bounded all the same: a ticket is a slot of a fixed table, and when every slot is
// held open() hands out none, so the op goes untimed and the caller counts it
// (ops_untimed_no_timing_slot). A slot's generation is part of its ticket: a late record of a
// ticket released since never reaches the ticket that holds the slot next.
//
// Threads: open(), share() and release() are lock-free (application threads, and the background
// thread's releases); consume() (CUPTI's buffer callback), resolve() and sweep() take a mutex.
#pragma once

#include <cupti_activity.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "syncopate/collector/timing_backend.hpp"

namespace syncopate::preload {

class CuptiTickets {
 public:
  // cuptiActivityGetNextRecord, or a stand-in that walks fabricated records.
  using NextRecord = CUptiResult (*)(std::uint8_t* buffer, std::size_t valid_bytes, CUpti_Activity** record);
  // CLOCK_MONOTONIC in ns, or a test's simulated clock.
  using Clock = std::int64_t (*)() noexcept;

  static constexpr std::uint32_t kDefaultCapacity = 1u << 16;
  // An activity whose external-correlation record has not come this long after it is forgotten:
  // it belongs to a call nobody bracketed (that record comes with the call, before the work ends).
  static constexpr std::int64_t kForgetUnjoinedNs = 60'000'000'000;

  // Throws std::bad_alloc.
  explicit CuptiTickets(Clock clock, std::uint32_t capacity = kDefaultCapacity);

  // A ticket with one reference; kNoTicket when every slot is held.
  Ticket open() noexcept;
  void share(Ticket ticket, int extra_references) noexcept;
  // Drops a reference; the last one frees the slot (what was joined to the ticket goes with it).
  void release(Ticket ticket) noexcept;

  // The records of one buffer CUPTI completed. Throws std::bad_alloc.
  void consume(std::uint8_t* buffer, std::size_t valid_bytes, NextRecord next);
  // Resolved once an activity has come (the span of all of them, when several have: the kernels
  // of an NCCL group); Pending until then, however long; Failed for a ticket nobody holds.
  Resolution resolve(Ticket ticket, std::int64_t& start_ns, std::int64_t& end_ns);
  // Forgets the joins of released tickets and activities nobody claimed (kForgetUnjoinedNs).
  void sweep();

 private:
  struct Slot {
    std::atomic<Ticket> ticket{kNoTicket};    // the ticket that holds it; kNoTicket while free
    std::atomic<int> references{0};
    std::atomic<std::uint32_t> next_free{0};  // free list link: index + 1, 0 = end
    std::uint32_t generation = 0;             // changed only by whoever holds the slot
    // Guarded by the mutex: the GPU span of `timed`'s activities (a previous holder's never
    // count for the next).
    Ticket timed = kNoTicket;
    std::int64_t start = 0;
    std::int64_t end = 0;
  };
  struct Interval {
    std::int64_t start = 0;
    std::int64_t end = 0;
  };
  struct Unjoined {
    std::vector<Interval> intervals;
    std::int64_t since_ns = 0;
  };

  Slot* held(Ticket ticket) noexcept;  // the slot `ticket` holds, or null
  std::uint32_t pop() noexcept;        // index + 1; 0 when every slot is held
  void push(std::uint32_t index) noexcept;
  void addExternal(std::uint32_t correlation, Ticket ticket);
  void addActivity(std::uint32_t correlation, Interval interval);
  static void merge(Slot& slot, Ticket ticket, Interval interval) noexcept;

  const Clock clock_;
  const std::uint32_t capacity_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<std::uint64_t> free_head_{0};  // (ABA tag << 32) | (index + 1)

  std::mutex mutex_;
  std::unordered_map<std::uint32_t, Ticket> ticket_of_;   // CUPTI correlation -> ticket
  std::unordered_map<std::uint32_t, Unjoined> unjoined_;  // activities before their correlation
};

}  // namespace syncopate::preload
