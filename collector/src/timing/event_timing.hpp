// GPU timing with CUDA events: a pair of timing events recorded on the op's own stream right
// before and after the call that issues it. Works wherever the CUDA runtime does (simgpu too)
// and whoever else holds CUPTI.
//
// Events come from a per-device pool created on first use: a first chunk on the issuing
// thread, more by the background thread while the free list runs low (or by the issuing thread
// itself when it finds the list empty: a host far ahead of its GPU holds many), up to a bound
// (then ops go untimed and are counted). The background thread converts event times to CLOCK_MONOTONIC
// through anchors: an event it records on a private idle stream while reading the host clock
// on both sides (the tightest of a few tries), renewed every second so that the float
// milliseconds of cudaEventElapsedTime stay precise.
//
// An application thread may issue work for a device other than its current one (one thread
// driving several devices through an NCCL group): the events for it are made on that device
// (the thread's current device is switched for that and back, within the call). cudaDeviceReset
// destroys a device's events: its pool is retired (kept, so that tickets taken from it resolve
// or fail) and a new one is made on next use.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "syncopate/collector/index_free_list.hpp"
#include "syncopate/collector/timing_backend.hpp"
#include "syncopate/dispatch/tables.hpp"

namespace syncopate::preload {

class EventTiming final : public TimingBackend {
 public:
  explicit EventTiming(std::uint32_t pairs_per_device);
  ~EventTiming() override;

  const char* name() const noexcept override { return "events"; }
  Ticket begin(int device, cudaStream_t stream, std::uint32_t correlation) noexcept override;
  bool end(Ticket ticket, cudaStream_t stream, bool issued) noexcept override;
  void share(Ticket ticket, int extra_references) noexcept override;
  void collect() noexcept override;
  Resolution resolve(Ticket ticket, std::int64_t& start_ns, std::int64_t& end_ns) noexcept override;
  void release(Ticket ticket) noexcept override;
  void releaseResolved(Ticket ticket) noexcept override;
  void publishReleases() noexcept override;
  void drain(std::int64_t deadline_ns) noexcept override;
  void deviceReset(int device) noexcept override;

  static constexpr int kMaxDevices = 64;

 private:
  struct Slot {
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
    std::atomic<int> references{0};
    std::atomic<std::int32_t> anchor{-1};     // the latest anchor when the op was issued
  };
  struct Anchor {
    cudaEvent_t event = nullptr;
    std::int64_t host_ns = 0;
  };
  // A device's pool; a new one after each cudaDeviceReset (the events of the old one went with
  // the context). Retired pools are kept, so that their tickets still find them.
  struct Pool {
    // The real runtime's table, found when the pool is made (its first chunk of events needs
    // it): each launch records its two events through it without asking the chain again.
    const CudartTable* real = nullptr;
    int device = 0;
    std::uint32_t generation = 0;  // which pool of its device, from 0
    Pool* retired_before = nullptr;  // the pool of the device retired before this one was
    std::uint32_t capacity = 0;
    std::unique_ptr<Slot[]> slots;
    std::unique_ptr<IndexFreeList> free;         // slots with events, not in use
    std::atomic<std::uint32_t> created{0};       // slots [0, created) have events
    std::mutex grow_mutex;                       // one thread creates events at a time
    cudaStream_t anchor_stream = nullptr;        // background thread only
    static constexpr int kAnchors = 64;          // a ring: the last minute of anchors
    std::array<Anchor, kAnchors> anchors{};
    std::atomic<std::int32_t> anchor_count{0};   // anchors ever made
    std::int64_t next_anchor_ns = 0;
  };

  Pool* pool(int device) noexcept;
  Pool* poolOf(Ticket ticket) const noexcept;  // the pool a ticket came from
  Pool* createPool(int device) noexcept;
  bool grow(Pool& pool, std::uint32_t count) noexcept;  // creates events for `count` more slots
  bool makeAnchor(Pool& pool) noexcept;                 // background thread, on pool.device
  const Anchor* anchorFor(const Pool& pool, std::int32_t issued_with) const noexcept;

  // The background thread's released slots not yet back in their pools' free lists, and one
  // pool's run of them being pushed (publishReleases).
  std::vector<Ticket> released_;
  std::vector<std::uint32_t> run_;

  const std::uint32_t pairs_per_device_;
  std::array<std::atomic<Pool*>, kMaxDevices> pools_{};
  std::array<std::atomic<Pool*>, kMaxDevices> retired_{};  // latest first, through retired_before
  std::array<std::uint32_t, kMaxDevices> pools_made_{};     // guarded by create_mutex_
  std::mutex create_mutex_;
};

}  // namespace syncopate::preload
