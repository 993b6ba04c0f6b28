// A fixed-capacity, insert-only map from a non-zero address (a kernel's host stub, a stream or
// communicator handle) to a pointer, safe for concurrent readers and writers without locks:
// lookups are a hash and a short linear probe of atomics. Values are set once and may be
// replaced; keys are never removed (a destroyed handle's slot is reused only by the same
// address, which the driver may hand out again). Storage is a static array: zero pages that
// cost nothing until touched, and constant-initialised, so the map works before any
// constructor of the library has run.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace syncopate::preload {

template <class T, unsigned Log2Capacity>
class AddressMap {
 public:
  static constexpr std::size_t kCapacity = std::size_t{1} << Log2Capacity;

  // Returns false when the map is full (the caller counts it).
  bool insert(std::uintptr_t key, T* value) noexcept {
    std::size_t index = hash(key);
    for (std::size_t probes = 0; probes < kCapacity; ++probes, index = (index + 1) & (kCapacity - 1)) {
      Slot& slot = slots_[index];
      std::uintptr_t current = slot.key.load(std::memory_order_acquire);
      if (current == 0 && slot.key.compare_exchange_strong(current, key, std::memory_order_acq_rel)) current = key;
      if (current == key) {
        slot.value.store(value, std::memory_order_release);
        return true;
      }
    }
    return false;
  }

  T* find(std::uintptr_t key) const noexcept {
    std::size_t index = hash(key);
    for (std::size_t probes = 0; probes < kCapacity; ++probes, index = (index + 1) & (kCapacity - 1)) {
      const Slot& slot = slots_[index];
      std::uintptr_t current = slot.key.load(std::memory_order_acquire);
      if (current == key) return slot.value.load(std::memory_order_acquire);
      if (current == 0) return nullptr;
    }
    return nullptr;
  }

 private:
  struct Slot {
    std::atomic<std::uintptr_t> key{0};
    std::atomic<T*> value{nullptr};
  };

  static std::size_t hash(std::uintptr_t key) noexcept {
    // Fibonacci hashing: addresses are aligned, so their low bits say little.
    return static_cast<std::size_t>((static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> (64 - Log2Capacity));
  }

  Slot slots_[kCapacity];
};

}  // namespace syncopate::preload
