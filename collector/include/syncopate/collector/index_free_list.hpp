// The free slots of a timing pool (the events backend's event pairs): a lock-free stack of the
// indices [0, capacity), popped by the application threads that issue ops and pushed by the
// background thread as it releases them.
//
// Its head is one word holding the top, the number of free indices and an ABA tag, so that a
// pop or a push is a single compare-and-swap that keeps the count as well: the issuing thread
// pays one atomic read-modify-write per op, and the background thread reads the count to grow
// the pool ahead of need. The links are an array of their own, written only by the thread that
// pushes an index and read by the one that pops it after the head published it.
//
// The tag changes with every successful push and pop; a pop that read the head, was held up
// while 2^22 other pushes and pops went by and then finds the same tag, count and top would
// take a stale link. Nothing else frees or moves the links, so a stale read is never unsafe in
// itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <span>

namespace syncopate::preload {

class IndexFreeList {
 public:
  static constexpr std::uint32_t kMaxCapacity = 1u << 20;
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};

  // Empty, for indices below `capacity` (1 to kMaxCapacity); valid() says whether it is usable
  // (its links allocated, the capacity within bounds).
  explicit IndexFreeList(std::uint32_t capacity) noexcept
      : capacity_(capacity <= kMaxCapacity ? capacity : 0),
        links_(new (std::nothrow) std::atomic<std::uint32_t>[capacity_]) {}

  bool valid() const noexcept { return capacity_ > 0 && links_ != nullptr; }

  // An index, or kEmpty.
  std::uint32_t pop() noexcept {
    std::uint64_t head = head_.load(std::memory_order_acquire);
    for (;;) {
      const std::uint32_t top = topOf(head);
      if (top == 0) return kEmpty;
      const std::uint32_t next = links_[top - 1].load(std::memory_order_relaxed);
      if (head_.compare_exchange_weak(head, make(tagOf(head) + 1, countOf(head) - 1, next), std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        return top - 1;
      }
    }
  }

  void push(std::uint32_t index) noexcept { pushRun(index, 1); }

  // Pushes `indices` (none free already), the first on top: one compare-and-swap for all, so
  // that the thread releasing a batch takes the head's cache line from the popping threads once
  // rather than once per index.
  void pushAll(std::span<const std::uint32_t> indices) noexcept {
    if (indices.empty()) return;
    for (std::size_t k = 0; k + 1 < indices.size(); ++k) {
      links_[indices[k]].store(indices[k + 1] + 1, std::memory_order_relaxed);
    }
    const std::uint32_t first = indices.front();
    const std::uint32_t last = indices.back();
    const auto count = static_cast<std::uint32_t>(indices.size());
    std::uint64_t head = head_.load(std::memory_order_relaxed);
    for (;;) {
      links_[last].store(topOf(head), std::memory_order_relaxed);
      if (head_.compare_exchange_weak(head, make(tagOf(head) + 1, countOf(head) + count, first + 1),
                                      std::memory_order_acq_rel, std::memory_order_relaxed)) {
        return;
      }
    }
  }

  // Pushes the `count` indices from `first` on (new slots: one compare-and-swap for all).
  void pushRun(std::uint32_t first, std::uint32_t count) noexcept {
    if (count == 0) return;
    const std::uint32_t last = first + count - 1;
    for (std::uint32_t index = first; index < last; ++index) {
      links_[index].store(index + 2, std::memory_order_relaxed);  // the next one's index + 1
    }
    std::uint64_t head = head_.load(std::memory_order_relaxed);
    for (;;) {
      links_[last].store(topOf(head), std::memory_order_relaxed);
      if (head_.compare_exchange_weak(head, make(tagOf(head) + 1, countOf(head) + count, first + 1),
                                      std::memory_order_acq_rel, std::memory_order_relaxed)) {
        return;
      }
    }
  }

  // How many indices are free (exact when nothing pushes or pops meanwhile).
  std::uint32_t size() const noexcept { return countOf(head_.load(std::memory_order_relaxed)); }

 private:
  // head: (tag << 42) | (count << 21) | (top index + 1); 0 in the low bits: empty.
  static constexpr unsigned kFieldBits = 21;
  static constexpr std::uint64_t kFieldMask = (std::uint64_t{1} << kFieldBits) - 1;
  static_assert(kMaxCapacity <= kFieldMask, "the top (index + 1) and the count fit their fields");

  static std::uint32_t topOf(std::uint64_t head) noexcept { return static_cast<std::uint32_t>(head & kFieldMask); }
  static std::uint32_t countOf(std::uint64_t head) noexcept {
    return static_cast<std::uint32_t>((head >> kFieldBits) & kFieldMask);
  }
  static std::uint64_t tagOf(std::uint64_t head) noexcept { return head >> (2 * kFieldBits); }
  static std::uint64_t make(std::uint64_t tag, std::uint32_t count, std::uint32_t top) noexcept {
    return (tag << (2 * kFieldBits)) | (std::uint64_t{count} << kFieldBits) | top;
  }

  const std::uint32_t capacity_;
  std::unique_ptr<std::atomic<std::uint32_t>[]> links_;
  std::atomic<std::uint64_t> head_{0};
};

}  // namespace syncopate::preload
