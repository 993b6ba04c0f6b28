// The map of device memory: ranges in and out, and readers that never see a half-made change
// while a writer keeps changing it.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "syncopate/dispatch/device_memory.hpp"

namespace syncopate::preload {
namespace {

bool contains(const DeviceMemoryMap& map, std::uint64_t address) {
  DeviceMemoryMap::Reading reading = map.read();
  const bool found = reading.contains(address);
  EXPECT_TRUE(reading.valid());  // no writer here
  return found;
}

TEST(DeviceMemory, RangesInAndOut) {
  auto map = std::make_unique<DeviceMemoryMap>();
  map->add(0x10000, 0x1000);
  map->add(0x30000, 0x100);
  map->add(0x20000, 0x800);
  EXPECT_EQ(map->size(), 3u);
  EXPECT_TRUE(contains(*map, 0x10000));
  EXPECT_TRUE(contains(*map, 0x10fff));
  EXPECT_FALSE(contains(*map, 0x11000));  // one past the end
  EXPECT_TRUE(contains(*map, 0x207f8));
  EXPECT_FALSE(contains(*map, 0xffff));
  EXPECT_FALSE(contains(*map, 0x30100));
  EXPECT_EQ(map->remove(0x20000), 0x800u);
  EXPECT_FALSE(contains(*map, 0x20000));
  EXPECT_EQ(map->remove(0x20000), 0u) << "gone already";
  EXPECT_EQ(map->remove(0x10010), 0u) << "a free names its allocation's start";
  map->add(0x10000, 0x10);  // the address handed out anew, smaller
  EXPECT_EQ(map->size(), 2u);
  EXPECT_FALSE(contains(*map, 0x10010));
  map->add(0, 16);  // not an allocation
  map->add(0x50000, 0);
  EXPECT_EQ(map->size(), 2u);
}

TEST(DeviceMemory, AFullMapSaysItIsIncomplete) {
  auto map = std::make_unique<DeviceMemoryMap>();
  for (std::uint64_t i = 0; i < DeviceMemoryMap::kCapacity; ++i) map->add(0x100000 + i * 0x100, 0x100);
  EXPECT_TRUE(map->read().complete());
  map->add(0x100000 + DeviceMemoryMap::kCapacity * 0x100, 0x100);
  EXPECT_EQ(map->size(), DeviceMemoryMap::kCapacity);
  EXPECT_FALSE(map->read().complete()) << "a range that did not fit may hold any word";
  EXPECT_TRUE(contains(*map, 0x100000 + 17 * 0x100 + 8));
}

// Readers on three threads while a writer adds and removes ranges between the ones that stay:
// every valid reading finds every lasting range and never a range that never existed. The writer
// writes until the readers have had 1000 valid readings while it wrote, however slow the build
// (a sanitizer's) makes either side; a map whose readings are never valid stops it at its cap.
TEST(DeviceMemory, ConcurrentReadersWithAWriter) {
  auto map = std::make_unique<DeviceMemoryMap>();
  constexpr std::uint64_t kStep = 0x10000;
  constexpr int kLasting = 64;
  for (int i = 0; i < kLasting; ++i) map->add((2 * i + 1) * kStep, 0x1000);  // odd steps stay
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> valid_readings{0}, valid_while_writing{0}, wrong_answers{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      for (std::uint64_t n = 0; n < 5000 || !stop.load(std::memory_order_relaxed); ++n) {
        DeviceMemoryMap::Reading reading = map->read();
        const std::uint64_t lasting = (2 * ((n + r) % kLasting) + 1) * kStep + 0x800;
        const std::uint64_t never = (2 * ((n + r) % kLasting) + 1) * kStep + 0x2000;  // between ranges
        const bool found_lasting = reading.contains(lasting);
        const bool found_never = reading.contains(never);
        if (!reading.valid()) continue;
        valid_readings.fetch_add(1, std::memory_order_relaxed);
        if (!stop.load(std::memory_order_relaxed)) valid_while_writing.fetch_add(1, std::memory_order_relaxed);
        if (!found_lasting || found_never) wrong_answers.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  constexpr std::uint64_t kValidWhileWriting = 1000;
  for (int round = 0; round < 2000 || (valid_while_writing.load() < kValidWhileWriting && round < 2'000'000); ++round) {
    for (int i = 0; i < 16; ++i) map->add((2 * ((round + i) % kLasting) + 2) * kStep, 0x1000);  // even steps come
    for (int i = 0; i < 16; ++i) map->remove((2 * ((round + i) % kLasting) + 2) * kStep);       // and go
  }
  stop.store(true);
  for (std::thread& reader : readers) reader.join();
  EXPECT_GE(valid_while_writing.load(), kValidWhileWriting);
  EXPECT_GE(valid_readings.load(), valid_while_writing.load());
  EXPECT_EQ(wrong_answers.load(), 0u);
  EXPECT_EQ(map->size(), static_cast<std::size_t>(kLasting));
}

}  // namespace
}  // namespace syncopate::preload
