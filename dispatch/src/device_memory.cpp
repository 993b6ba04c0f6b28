#include "syncopate/dispatch/device_memory.hpp"

#include "syncopate/dispatch/log.hpp"

namespace syncopate::preload {
namespace {

void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

// The writer's half of the seqlock (Boehm, "Can seqlocks get along with programming language
// memory models?"): the odd count is visible before any range changes, the even one after all.
void DeviceMemoryMap::beginWrite() noexcept {
  sequence_.store(sequence_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
}

void DeviceMemoryMap::endWrite() noexcept {
  sequence_.store(sequence_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

std::size_t DeviceMemoryMap::lowerBound(std::uint64_t base, std::size_t count) const noexcept {
  std::size_t low = 0, high = count;
  while (low < high) {
    const std::size_t middle = low + (high - low) / 2;
    if (ranges_[middle].base.load(std::memory_order_relaxed) < base) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low;
}

void DeviceMemoryMap::add(std::uint64_t base, std::uint64_t bytes) noexcept {
  if (base == 0 || bytes == 0) return;
  std::lock_guard lock(writers_);
  const std::size_t count = count_.load(std::memory_order_relaxed);
  const std::size_t at = lowerBound(base, count);
  const bool replaces = at < count && ranges_[at].base.load(std::memory_order_relaxed) == base;
  if (!replaces && count == kCapacity) {
    if (!overflowed_.exchange(true, std::memory_order_relaxed)) {
      log(LogLevel::Warn,
          "more than %zu device allocations are live: kernels whose parameters are scanned for addresses are "
          "treated as touching anything from now on",
          kCapacity);
    }
    return;
  }
  beginWrite();
  if (!replaces) {
    for (std::size_t i = count; i > at; --i) {
      ranges_[i].base.store(ranges_[i - 1].base.load(std::memory_order_relaxed), std::memory_order_relaxed);
      ranges_[i].end.store(ranges_[i - 1].end.load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    count_.store(count + 1, std::memory_order_relaxed);
  }
  ranges_[at].base.store(base, std::memory_order_relaxed);
  ranges_[at].end.store(base + bytes, std::memory_order_relaxed);
  if (base < lowest_.load(std::memory_order_relaxed)) lowest_.store(base, std::memory_order_relaxed);
  if (base + bytes > highest_.load(std::memory_order_relaxed)) highest_.store(base + bytes, std::memory_order_relaxed);
  endWrite();
}

std::uint64_t DeviceMemoryMap::remove(std::uint64_t base) noexcept {
  if (base == 0) return 0;
  std::lock_guard lock(writers_);
  const std::size_t count = count_.load(std::memory_order_relaxed);
  const std::size_t at = lowerBound(base, count);
  if (at == count || ranges_[at].base.load(std::memory_order_relaxed) != base) return 0;
  const std::uint64_t bytes = ranges_[at].end.load(std::memory_order_relaxed) - base;
  beginWrite();
  for (std::size_t i = at; i + 1 < count; ++i) {
    ranges_[i].base.store(ranges_[i + 1].base.load(std::memory_order_relaxed), std::memory_order_relaxed);
    ranges_[i].end.store(ranges_[i + 1].end.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  count_.store(count - 1, std::memory_order_relaxed);
  endWrite();
  return bytes;
}

DeviceMemoryMap::Reading DeviceMemoryMap::read() const noexcept {
  Reading reading;
  reading.map_ = this;
  for (;;) {
    reading.sequence_ = sequence_.load(std::memory_order_acquire);
    if ((reading.sequence_ & 1) == 0) break;
    pause();  // a writer is moving ranges: a few microseconds at most
  }
  const std::size_t count = count_.load(std::memory_order_relaxed);
  reading.count_ = count < kCapacity ? count : kCapacity;
  reading.lowest_ = lowest_.load(std::memory_order_relaxed);
  reading.highest_ = highest_.load(std::memory_order_relaxed);
  reading.complete_ = !overflowed_.load(std::memory_order_relaxed);
  return reading;
}

bool DeviceMemoryMap::Reading::contains(std::uint64_t address) noexcept {
  if (address < lowest_ || address >= highest_ || count_ == 0) return false;
  const Range* ranges = map_->ranges_;
  if (last_hit_ < count_ && address >= ranges[last_hit_].base.load(std::memory_order_relaxed) &&
      address < ranges[last_hit_].end.load(std::memory_order_relaxed)) {
    return true;
  }
  // The last range that starts at or below the address.
  const std::size_t after = map_->lowerBound(address + 1, count_);
  if (after == 0 || address >= ranges[after - 1].end.load(std::memory_order_relaxed)) return false;
  last_hit_ = after - 1;
  return true;
}

bool DeviceMemoryMap::Reading::valid() const noexcept {
  std::atomic_thread_fence(std::memory_order_acquire);
  return map_->sequence_.load(std::memory_order_relaxed) == sequence_;
}

std::size_t DeviceMemoryMap::size() const noexcept { return count_.load(std::memory_order_relaxed); }

DeviceMemoryMap& deviceMemory() noexcept {
  static constinit DeviceMemoryMap map;
  return map;
}

}  // namespace syncopate::preload
