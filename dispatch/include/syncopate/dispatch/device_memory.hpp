// The memory the process's kernels can address, as the allocation calls it made say: cudaMalloc
// and its kin (pitched, managed, pinned host), stream-ordered and pool allocations, cuMemAlloc*,
// and physical memory mapped into a reserved range (cuMemMap). A word of a kernel's parameter
// buffer that falls inside one of these ranges is taken as an address the kernel touches: that
// is how the layers learn what a by-value struct of pointers refers to (PyTorch's
// TensorIterator arrays, a caching allocator's sub-ranges of one segment), as on a real GPU,
// where no query says which bytes of a parameter are pointers.
//
// Readers (every launch with a by-value aggregate) take no lock, write nothing shared and
// allocate nothing: a sequence counter around a sorted array of atomics (a seqlock); a reader
// that overlapped a writer reads again. Writers (allocation and free calls, never on the launch
// path) serialise on a mutex. The capacity is fixed (zero pages until used); once a range did
// not fit, the map says it is incomplete, and a word outside it may still be an address.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace syncopate::preload {

class DeviceMemoryMap {
 public:
  static constexpr std::size_t kCapacity = std::size_t{1} << 16;

  // The range [base, base + bytes); the same base again (an address handed out anew) replaces
  // the old range.
  void add(std::uint64_t base, std::uint64_t bytes) noexcept;
  // Forgets the range that starts at `base` (a free names its allocation's start) and returns
  // its size; 0 when no range starts there.
  std::uint64_t remove(std::uint64_t base) noexcept;

  // A consistent reading of the map: take one with read(), ask contains() for any number of
  // words, and keep the answers only if valid() then says no writer came between.
  class Reading {
   public:
    bool contains(std::uint64_t address) noexcept;
    bool complete() const noexcept { return complete_; }
    bool valid() const noexcept;

   private:
    friend class DeviceMemoryMap;
    const DeviceMemoryMap* map_ = nullptr;
    std::uint64_t sequence_ = 0;
    std::size_t count_ = 0;
    std::uint64_t lowest_ = 0;
    std::uint64_t highest_ = 0;
    std::size_t last_hit_ = 0;  // consecutive words tend to fall into one allocation
    bool complete_ = true;
  };
  Reading read() const noexcept;

  std::size_t size() const noexcept;

 private:
  struct Range {
    std::atomic<std::uint64_t> base{0};
    std::atomic<std::uint64_t> end{0};
  };
  void beginWrite() noexcept;
  void endWrite() noexcept;
  std::size_t lowerBound(std::uint64_t base, std::size_t count) const noexcept;

  std::mutex writers_;
  std::atomic<std::uint64_t> sequence_{0};  // odd while a writer changes the ranges
  std::atomic<std::size_t> count_{0};
  // No range lies outside [lowest_, highest_): one comparison rejects most words.
  std::atomic<std::uint64_t> lowest_{~std::uint64_t{0}};
  std::atomic<std::uint64_t> highest_{0};
  std::atomic<bool> overflowed_{false};
  Range ranges_[kCapacity];  // sorted by base, [0, count_)
};

// The process's map, kept by the exported allocation and free calls below every layer.
DeviceMemoryMap& deviceMemory() noexcept;

}  // namespace syncopate::preload
