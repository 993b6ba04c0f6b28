// A bounded single-producer/single-consumer ring: the per-thread buffer between a traced
// thread (producer: the collector's interposers) and the background writer (consumer).
//
// Push never locks, allocates or makes a syscall: it writes the slot and publishes the new
// tail with a release store. When the ring is full the push is refused and counted in
// dropped(), exactly (the producer is the only writer of that counter). The consumer sees
// whole pushes only: a multi-record push is published at once, so a record pair pushed
// together is drained together or not at all.
//
// Storage is allocated once by create(), its pages faulted in then (one system call): a ring
// whose pages came as it filled took a page fault every 4 KiB of records on its first pass,
// microseconds in the middle of a producer's push. Indices are 64-bit counters that never wrap
// in practice (2^64 pushes), masked into the power-of-two capacity.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <type_traits>

#include <sys/mman.h>

namespace syncopate::trace {

template <class T>
class SpscRing {
  static_assert(std::is_trivially_copyable_v<T>, "ring slots are copied bytewise");

 public:
  // A ring holding at least `min_capacity` items (rounded up to a power of two, at least 2);
  // nullptr when the memory is not available.
  static std::unique_ptr<SpscRing> create(std::size_t min_capacity) noexcept {
    std::size_t capacity = 2;
    while (capacity < min_capacity) {
      if (capacity > (std::size_t{1} << 40)) return nullptr;
      capacity <<= 1;
    }
    const std::size_t bytes = capacity * sizeof(T);
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return nullptr;
    // Faulted in at once (Linux 5.14 on; elsewhere the writes below fault them page by page),
    // then written: a virtual machine's host may back a page that its guest kernel faulted in
    // only at the first write to it, a fault of its own (5 us a page on the build machine).
    (void)madvise(memory, bytes, MADV_POPULATE_WRITE);
    std::memset(memory, 0, bytes);
    Slots slots(static_cast<T*>(memory), Unmap{bytes});
    return std::unique_ptr<SpscRing>(new (std::nothrow) SpscRing(std::move(slots), capacity));
  }

  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  // Producer side.

  bool tryPush(const T& item) noexcept {
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - cached_head_ >= capacity_) {
      cached_head_ = head_.load(std::memory_order_acquire);
      if (tail - cached_head_ >= capacity_) {
        countDropped(1);
        return false;
      }
    }
    slots_.get()[tail & mask_] = item;
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  // All of `items` or none of them (then all are counted as dropped).
  bool tryPush(std::span<const T> items) noexcept {
    const std::uint64_t n = items.size();
    if (!tryReserve(n)) return false;
    for (std::uint64_t i = 0; i < n; ++i) reserved(i) = items[i];
    publish(n);
    return true;
  }

  // The same in place, for a producer that builds its items where they go rather than
  // copying them in: room for `n` (all or none; a refusal counts them as dropped), then
  // reserved(0..n-1) written, then publish(n) hands all of them to the consumer at once.
  bool tryReserve(std::uint64_t n) noexcept {
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - cached_head_ + n > capacity_) [[unlikely]] {
      cached_head_ = head_.load(std::memory_order_acquire);
      if (tail - cached_head_ + n > capacity_) {
        countDropped(n);
        return false;
      }
    }
    return true;
  }
  T& reserved(std::uint64_t i) noexcept { return slots_.get()[(tail_.load(std::memory_order_relaxed) + i) & mask_]; }
  void publish(std::uint64_t n) noexcept {
    tail_.store(tail_.load(std::memory_order_relaxed) + n, std::memory_order_release);
  }

  // Consumer side: hands everything published so far to `consume` as one or two contiguous
  // spans (two when it wraps around the end of the storage), then frees those slots.
  // Returns how many items were consumed.
  template <class Consume>
  std::size_t drain(Consume&& consume) {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    const std::uint64_t tail = tail_.load(std::memory_order_acquire);
    const std::uint64_t n = tail - head;
    if (n == 0) return 0;
    const std::uint64_t first = head & mask_;
    const std::uint64_t first_len = n < capacity_ - first ? n : capacity_ - first;
    consume(std::span<const T>(slots_.get() + first, first_len));
    if (first_len < n) consume(std::span<const T>(slots_.get(), n - first_len));
    head_.store(tail, std::memory_order_release);
    return n;
  }

  // Either side.
  std::size_t capacity() const noexcept { return capacity_; }
  std::uint64_t pushed() const noexcept { return tail_.load(std::memory_order_acquire); }
  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_acquire); }
  std::size_t sizeApprox() const noexcept {
    return tail_.load(std::memory_order_acquire) - head_.load(std::memory_order_acquire);
  }

 private:
  struct Unmap {
    std::size_t bytes = 0;
    void operator()(T* slots) const noexcept { munmap(slots, bytes); }
  };
  using Slots = std::unique_ptr<T, Unmap>;

  SpscRing(Slots slots, std::size_t capacity) noexcept
      : slots_(std::move(slots)), capacity_(capacity), mask_(capacity - 1) {}

  void countDropped(std::uint64_t n) noexcept {
    // Only the producer writes it, so load+store is exact without a read-modify-write.
    dropped_.store(dropped_.load(std::memory_order_relaxed) + n, std::memory_order_release);
  }

  // Read-only after construction, shared by both sides.
  Slots slots_;
  std::uint64_t capacity_;
  std::uint64_t mask_;

  // Producer-owned line: its tail, its stale copy of the consumer's head, its drop count.
  alignas(64) std::atomic<std::uint64_t> tail_{0};
  std::uint64_t cached_head_ = 0;
  std::atomic<std::uint64_t> dropped_{0};

  // Consumer-owned line.
  alignas(64) std::atomic<std::uint64_t> head_{0};
};

}  // namespace syncopate::trace
