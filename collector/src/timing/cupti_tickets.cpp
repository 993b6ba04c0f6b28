#include "syncopate/collector/cupti_tickets.hpp"

#include <algorithm>

namespace syncopate::preload {
namespace {

constexpr std::uint32_t kGenerationMask = 0x7fffffffu;  // tickets stay positive, never ~0

Ticket makeTicket(std::uint32_t generation, std::uint32_t index) noexcept {
  return static_cast<Ticket>(generation & kGenerationMask) << 32 | (static_cast<Ticket>(index) + 1);
}

}  // namespace

CuptiTickets::CuptiTickets(Clock clock, std::uint32_t capacity)
    : clock_(clock), capacity_(capacity), slots_(new Slot[capacity]) {
  for (std::uint32_t i = 0; i + 1 < capacity_; ++i) slots_[i].next_free.store(i + 2, std::memory_order_relaxed);
  free_head_.store(capacity_ > 0 ? 1 : 0, std::memory_order_release);
}

CuptiTickets::Slot* CuptiTickets::held(Ticket ticket) noexcept {
  const std::uint64_t index_plus_one = ticket & 0xffffffffu;
  if (index_plus_one == 0 || index_plus_one > capacity_) return nullptr;
  Slot& slot = slots_[index_plus_one - 1];
  return slot.ticket.load(std::memory_order_acquire) == ticket ? &slot : nullptr;
}

std::uint32_t CuptiTickets::pop() noexcept {
  std::uint64_t head = free_head_.load(std::memory_order_acquire);
  for (;;) {
    const auto top = static_cast<std::uint32_t>(head);
    if (top == 0) return 0;
    const std::uint32_t next = slots_[top - 1].next_free.load(std::memory_order_relaxed);
    const std::uint64_t replacement = ((head >> 32) + 1) << 32 | next;
    if (free_head_.compare_exchange_weak(head, replacement, std::memory_order_acq_rel)) return top;
  }
}

void CuptiTickets::push(std::uint32_t index) noexcept {
  std::uint64_t head = free_head_.load(std::memory_order_acquire);
  for (;;) {
    slots_[index].next_free.store(static_cast<std::uint32_t>(head), std::memory_order_relaxed);
    const std::uint64_t replacement = ((head >> 32) + 1) << 32 | (index + 1);
    if (free_head_.compare_exchange_weak(head, replacement, std::memory_order_acq_rel)) return;
  }
}

Ticket CuptiTickets::open() noexcept {
  const std::uint32_t top = pop();
  if (top == 0) return kNoTicket;
  Slot& slot = slots_[top - 1];
  const Ticket ticket = makeTicket(slot.generation, top - 1);
  slot.references.store(1, std::memory_order_relaxed);
  slot.ticket.store(ticket, std::memory_order_release);
  return ticket;
}

void CuptiTickets::share(Ticket ticket, int extra_references) noexcept {
  if (Slot* slot = held(ticket)) slot->references.fetch_add(extra_references, std::memory_order_relaxed);
}

void CuptiTickets::release(Ticket ticket) noexcept {
  Slot* slot = held(ticket);
  if (slot == nullptr || slot->references.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  slot->generation = (slot->generation + 1) & kGenerationMask;
  slot->ticket.store(kNoTicket, std::memory_order_release);
  push(static_cast<std::uint32_t>(slot - slots_.get()));
}

void CuptiTickets::merge(Slot& slot, Ticket ticket, Interval interval) noexcept {
  if (slot.timed != ticket) {
    slot.timed = ticket;
    slot.start = interval.start;
    slot.end = interval.end;
    return;
  }
  slot.start = std::min(slot.start, interval.start);
  slot.end = std::max(slot.end, interval.end);
}

void CuptiTickets::addExternal(std::uint32_t correlation, Ticket ticket) {
  Slot* slot = held(ticket);
  if (slot == nullptr) return;  // released already (its call failed), or not ours
  ticket_of_[correlation] = ticket;
  auto waiting = unjoined_.find(correlation);
  if (waiting == unjoined_.end()) return;
  for (const Interval& interval : waiting->second.intervals) merge(*slot, ticket, interval);
  unjoined_.erase(waiting);
}

void CuptiTickets::addActivity(std::uint32_t correlation, Interval interval) {
  if (auto joined = ticket_of_.find(correlation); joined != ticket_of_.end()) {
    if (Slot* slot = held(joined->second)) merge(*slot, joined->second, interval);
    return;
  }
  auto [waiting, inserted] = unjoined_.try_emplace(correlation, Unjoined{{}, clock_()});
  waiting->second.intervals.push_back(interval);
}

void CuptiTickets::consume(std::uint8_t* buffer, std::size_t valid_bytes, NextRecord next) {
  std::lock_guard lock(mutex_);
  CUpti_Activity* record = nullptr;
  while (next(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        auto* external = reinterpret_cast<CUpti_ActivityExternalCorrelation*>(record);
        if (external->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
          addExternal(external->correlationId, external->externalId);
        }
        break;
      }
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        auto* kernel = reinterpret_cast<CUpti_ActivityKernel10*>(record);
        addActivity(kernel->correlationId,
                    {static_cast<std::int64_t>(kernel->start), static_cast<std::int64_t>(kernel->end)});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* copy = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
        addActivity(copy->correlationId,
                    {static_cast<std::int64_t>(copy->start), static_cast<std::int64_t>(copy->end)});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* fill = reinterpret_cast<CUpti_ActivityMemset4*>(record);
        addActivity(fill->correlationId,
                    {static_cast<std::int64_t>(fill->start), static_cast<std::int64_t>(fill->end)});
        break;
      }
      default: break;  // API records: only their external correlations matter
    }
  }
}

Resolution CuptiTickets::resolve(Ticket ticket, std::int64_t& start_ns, std::int64_t& end_ns) {
  std::lock_guard lock(mutex_);
  const Slot* slot = held(ticket);
  if (slot == nullptr) return Resolution::Failed;
  if (slot->timed != ticket) return Resolution::Pending;
  start_ns = slot->start;
  end_ns = slot->end;
  return Resolution::Resolved;
}

void CuptiTickets::sweep() {
  const std::int64_t now_ns = clock_();
  std::lock_guard lock(mutex_);
  std::erase_if(ticket_of_, [this](const auto& entry) { return held(entry.second) == nullptr; });
  std::erase_if(unjoined_, [now_ns](const auto& entry) { return now_ns - entry.second.since_ns > kForgetUnjoinedNs; });
}

}  // namespace syncopate::preload
