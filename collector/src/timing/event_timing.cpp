#include "timing/event_timing.hpp"

#include <algorithm>
#include <thread>

#include "common/clock.hpp"
#include "syncopate/dispatch/log.hpp"
#include "syncopate/dispatch/chain.hpp"

namespace syncopate::preload {
namespace {

constexpr std::uint32_t kFirstChunk = 1024;  // created on the issuing thread
constexpr std::uint32_t kGrowChunk = 1024;  // created by the background thread
constexpr std::int64_t kAnchorIntervalNs = 1'000'000'000;
constexpr std::int64_t kTightAnchorNs = 20'000;

// A ticket: the pool's generation (24 bits), its device (8 bits) and the slot's index + 1.
Ticket makeTicket(int device, std::uint32_t generation, std::uint32_t index) {
  return (static_cast<Ticket>(generation & 0xffffffu) << 40) | (static_cast<Ticket>(device) << 32) | (index + 1);
}
int ticketDevice(Ticket ticket) { return static_cast<int>((ticket >> 32) & 0xffu); }
std::uint32_t ticketGeneration(Ticket ticket) { return static_cast<std::uint32_t>(ticket >> 40); }
std::uint32_t ticketIndex(Ticket ticket) { return static_cast<std::uint32_t>(ticket) - 1; }

// The background thread works on whatever device a pool belongs to; only its own current
// device changes, never an application thread's.
void useDevice(int device) {
  static thread_local int current = -1;
  if (current == device) return;
  if (const CudartTable* real = realCudart(); real != nullptr && real->cudaSetDevice(device) == cudaSuccess) {
    current = device;
  }
}

// Events belong to the device current when they are made. An application thread may issue
// work for a device that is not its current one (a thread driving several devices through one
// NCCL group): the events for it are made on that device, and the thread's own current device
// is back before the call returns, so the application never sees it change.
class OnDevice {
 public:
  explicit OnDevice(int device) noexcept {
    const CudartHelpers* helpers = cudartHelpers();
    const CudartTable* real = realCudart();
    if (helpers == nullptr || real == nullptr || helpers->cudaGetDevice == nullptr) return;
    if (helpers->cudaGetDevice(&previous_) != cudaSuccess || previous_ == device) return;
    switched_ = real->cudaSetDevice(device) == cudaSuccess;
  }
  ~OnDevice() {
    if (switched_) realCudart()->cudaSetDevice(previous_);
  }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  int previous_ = -1;
  bool switched_ = false;
};

}  // namespace

EventTiming::EventTiming(std::uint32_t pairs_per_device) : pairs_per_device_(pairs_per_device) {
  constexpr std::size_t kRunCapacity = 4096;
  try {
    run_.reserve(kRunCapacity);
    released_.reserve(kRunCapacity);
  } catch (...) {  // publishReleases() then frees one slot at a time
  }
}

// The pools live as long as the process: events are never destroyed while work may still
// refer to them, and at exit the runtime tears the context down anyway.
EventTiming::~EventTiming() = default;

EventTiming::Pool* EventTiming::pool(int device) noexcept {
  if (device < 0 || device >= kMaxDevices) return nullptr;
  if (Pool* existing = pools_[static_cast<std::size_t>(device)].load(std::memory_order_acquire)) [[likely]] return existing;
  return createPool(device);
}

EventTiming::Pool* EventTiming::createPool(int device) noexcept {
  std::lock_guard lock(create_mutex_);
  auto& slot = pools_[static_cast<std::size_t>(device)];
  if (Pool* existing = slot.load(std::memory_order_acquire)) return existing;
  auto* created = new (std::nothrow) Pool;
  if (created == nullptr) return nullptr;
  created->real = realCudart();
  created->device = device;
  created->generation = pools_made_[static_cast<std::size_t>(device)] & 0xffffffu;
  created->capacity = pairs_per_device_;
  created->slots.reset(new (std::nothrow) Slot[pairs_per_device_]);
  created->free.reset(new (std::nothrow) IndexFreeList(pairs_per_device_));
  // The first chunk is made here, on the thread issuing the device's first op.
  const OnDevice on_device(device);
  if (created->real == nullptr || !created->slots || !created->free || !created->free->valid() ||
      !grow(*created, std::min(kFirstChunk, pairs_per_device_))) {
    log(LogLevel::Error, "cannot create CUDA events for timing on device %d; its ops are not timed", device);
    delete created;
    return nullptr;
  }
  ++pools_made_[static_cast<std::size_t>(device)];
  slot.store(created, std::memory_order_release);
  return created;
}

EventTiming::Pool* EventTiming::poolOf(Ticket ticket) const noexcept {
  const auto device = static_cast<std::size_t>(ticketDevice(ticket));
  const std::uint32_t generation = ticketGeneration(ticket);
  Pool* p = pools_[device].load(std::memory_order_acquire);
  if (p != nullptr && p->generation == generation) [[likely]] return p;
  for (p = retired_[device].load(std::memory_order_acquire); p != nullptr; p = p->retired_before) {
    if (p->generation == generation) return p;
  }
  return nullptr;
}

void EventTiming::deviceReset(int device) noexcept {
  if (device < 0 || device >= kMaxDevices) return;
  std::lock_guard lock(create_mutex_);
  const auto index = static_cast<std::size_t>(device);
  Pool* old = pools_[index].exchange(nullptr, std::memory_order_acq_rel);
  if (old == nullptr) return;
  old->retired_before = retired_[index].load(std::memory_order_relaxed);
  retired_[index].store(old, std::memory_order_release);
}

bool EventTiming::grow(Pool& pool, std::uint32_t count) noexcept {
  std::lock_guard lock(pool.grow_mutex);
  const CudartHelpers* helpers = cudartHelpers();
  if (helpers == nullptr || helpers->cudaEventCreateWithFlags == nullptr) return false;
  std::uint32_t first = pool.created.load(std::memory_order_relaxed);
  std::uint32_t last = std::min(pool.capacity, first + count);
  std::uint32_t made = first;
  for (; made < last; ++made) {
    Slot& slot = pool.slots[made];
    if (helpers->cudaEventCreateWithFlags(&slot.start, cudaEventDefault) != cudaSuccess) break;
    if (helpers->cudaEventCreateWithFlags(&slot.end, cudaEventDefault) != cudaSuccess) {
      helpers->cudaEventDestroy(slot.start);
      break;
    }
  }
  pool.created.store(made, std::memory_order_release);
  pool.free->pushRun(first, made - first);
  return made > first;
}

Ticket EventTiming::begin(int device, cudaStream_t stream, std::uint32_t) noexcept {
  Pool* p = pool(device);
  if (p == nullptr) return kNoTicket;
  std::uint32_t index = p->free->pop();
  if (index == IndexFreeList::kEmpty) [[unlikely]] {
    // Everything in flight: more events, made here, unless the pool is at its bound.
    {
      const OnDevice on_device(device);
      grow(*p, kGrowChunk);
    }
    index = p->free->pop();
    if (index == IndexFreeList::kEmpty) return kNoTicket;
  }
  Slot& slot = p->slots[index];
  slot.references.store(1, std::memory_order_relaxed);
  slot.anchor.store(p->anchor_count.load(std::memory_order_acquire) - 1, std::memory_order_relaxed);
  if (p->real->cudaEventRecord(slot.start, stream) != cudaSuccess) {
    p->free->push(index);
    return kNoTicket;
  }
  return makeTicket(device, p->generation, index);
}

bool EventTiming::end(Ticket ticket, cudaStream_t stream, bool issued) noexcept {
  Pool* p = poolOf(ticket);
  Slot& slot = p->slots[ticketIndex(ticket)];
  if (issued && p->real->cudaEventRecord(slot.end, stream) == cudaSuccess) return true;
  release(ticket);
  return false;
}

void EventTiming::share(Ticket ticket, int extra_references) noexcept {
  Pool* p = poolOf(ticket);
  p->slots[ticketIndex(ticket)].references.fetch_add(extra_references, std::memory_order_relaxed);
}

void EventTiming::release(Ticket ticket) noexcept {
  Pool* p = poolOf(ticket);
  std::uint32_t index = ticketIndex(ticket);
  if (p->slots[index].references.fetch_sub(1, std::memory_order_acq_rel) == 1) p->free->push(index);
}

void EventTiming::releaseResolved(Ticket ticket) noexcept {
  Pool* p = poolOf(ticket);
  if (p->slots[ticketIndex(ticket)].references.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  try {
    released_.push_back(ticket);
  } catch (...) {  // no memory to hold it back: freed now
    p->free->push(ticketIndex(ticket));
  }
}

void EventTiming::publishReleases() noexcept {
  // Consecutive tickets of one pool go back in one push (nearly always all of them: one device).
  std::size_t at = 0;
  while (at < released_.size()) {
    Pool* p = poolOf(released_[at]);
    run_.clear();
    for (; at < released_.size() && poolOf(released_[at]) == p && run_.size() < run_.capacity(); ++at) {
      run_.push_back(ticketIndex(released_[at]));
    }
    if (run_.empty()) {  // no room was ever reserved for a run: one at a time
      p->free->push(ticketIndex(released_[at++]));
      continue;
    }
    p->free->pushAll(run_);
  }
  released_.clear();
}

bool EventTiming::makeAnchor(Pool& p) noexcept {
  const CudartHelpers* helpers = cudartHelpers();
  const CudartTable* real = realCudart();
  if (helpers == nullptr || real == nullptr) return false;
  useDevice(p.device);
  if (p.anchor_stream == nullptr &&
      helpers->cudaStreamCreateWithFlags(&p.anchor_stream, cudaStreamNonBlocking) != cudaSuccess) {
    return false;
  }
  std::int32_t count = p.anchor_count.load(std::memory_order_relaxed);
  Anchor& anchor = p.anchors[static_cast<std::size_t>(count % Pool::kAnchors)];
  if (anchor.event == nullptr && helpers->cudaEventCreateWithFlags(&anchor.event, cudaEventDefault) != cudaSuccess) {
    return false;
  }
  // The event is taken somewhere between the two host readings, so half their distance
  // bounds the error; a try disturbed by the scheduler is repeated (the event keeps the
  // time of the last try, which is the one measured).
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::int64_t before = monotonicNs();
    if (real->cudaEventRecord(anchor.event, p.anchor_stream) != cudaSuccess) return false;
    if (real->cudaEventSynchronize(anchor.event) != cudaSuccess) return false;
    std::int64_t after = monotonicNs();
    anchor.host_ns = before + (after - before) / 2;
    if (after - before < kTightAnchorNs) break;
  }
  p.anchor_count.store(count + 1, std::memory_order_release);
  return true;
}

const EventTiming::Anchor* EventTiming::anchorFor(const Pool& p, std::int32_t issued_with) const noexcept {
  std::int32_t count = p.anchor_count.load(std::memory_order_acquire);
  if (count == 0) return nullptr;
  // The anchor that was newest when the op was issued (so the elapsed time is short), else
  // the oldest one still kept, else (ops issued before the first anchor) the first.
  std::int32_t oldest_kept = std::max(0, count - Pool::kAnchors + 1);
  std::int32_t index = std::clamp(issued_with, oldest_kept, count - 1);
  return &p.anchors[static_cast<std::size_t>(index % Pool::kAnchors)];
}

void EventTiming::collect() noexcept {
  std::int64_t now = monotonicNs();
  for (auto& entry : pools_) {
    Pool* p = entry.load(std::memory_order_acquire);
    if (p == nullptr) continue;
    if (now >= p->next_anchor_ns) {
      if (makeAnchor(*p)) {
        p->next_anchor_ns = now + kAnchorIntervalNs;
      } else {
        p->next_anchor_ns = now + kAnchorIntervalNs / 10;
      }
    }
    std::uint32_t created = p->created.load(std::memory_order_relaxed);
    if (created < p->capacity && p->free->size() < created / 4 + 16) {
      useDevice(p->device);
      grow(*p, kGrowChunk);
    }
  }
}

Resolution EventTiming::resolve(Ticket ticket, std::int64_t& start_ns, std::int64_t& end_ns) noexcept {
  Pool* p = poolOf(ticket);
  const Slot& slot = p->slots[ticketIndex(ticket)];
  const CudartHelpers* helpers = cudartHelpers();
  cudaError_t state = helpers->cudaEventQuery(slot.end);
  if (state == cudaErrorNotReady) return Resolution::Pending;
  if (state != cudaSuccess) return Resolution::Failed;
  const Anchor* anchor = anchorFor(*p, slot.anchor.load(std::memory_order_relaxed));
  if (anchor == nullptr) return Resolution::Pending;  // the first anchor is on its way
  float from_anchor_ms = 0;
  float duration_ms = 0;
  if (helpers->cudaEventElapsedTime(&from_anchor_ms, anchor->event, slot.start) != cudaSuccess ||
      helpers->cudaEventElapsedTime(&duration_ms, slot.start, slot.end) != cudaSuccess) {
    return Resolution::Failed;
  }
  start_ns = anchor->host_ns + static_cast<std::int64_t>(static_cast<double>(from_anchor_ms) * 1e6);
  end_ns = start_ns + static_cast<std::int64_t>(static_cast<double>(duration_ms) * 1e6);
  return Resolution::Resolved;
}

void EventTiming::drain(std::int64_t deadline_ns) noexcept {
  // Everything issued is in flight on some stream: wait (bounded) until the pools' events in
  // use have completed; resolve() then finds them done.
  const CudartHelpers* helpers = cudartHelpers();
  if (helpers == nullptr) return;
  for (auto& entry : pools_) {
    Pool* p = entry.load(std::memory_order_acquire);
    if (p == nullptr) continue;
    if (p->anchor_count.load(std::memory_order_relaxed) == 0) makeAnchor(*p);
    std::uint32_t created = p->created.load(std::memory_order_acquire);
    for (std::uint32_t index = 0; index < created; ++index) {
      if (p->slots[index].references.load(std::memory_order_acquire) == 0) continue;
      while (helpers->cudaEventQuery(p->slots[index].end) == cudaErrorNotReady && monotonicNs() < deadline_ns) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }
}

}  // namespace syncopate::preload
