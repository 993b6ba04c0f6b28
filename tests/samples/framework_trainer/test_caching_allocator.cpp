#include "framework_trainer/caching_allocator.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <stdexcept>

namespace framework_trainer {
namespace {

// Segments at made-up, far-apart addresses; counts what was taken and given back.
struct FakeDevice {
  std::uintptr_t next = 0x10000000;
  std::map<void*, std::size_t> live;
  std::size_t room = SIZE_MAX;

  CachingAllocator allocator(std::size_t segment_bytes) {
    return CachingAllocator(
        [this](std::size_t bytes) -> void* {
          if (bytes > room) return nullptr;
          room -= bytes;
          void* p = reinterpret_cast<void*>(next);
          next += bytes + (std::size_t{1} << 30);
          live[p] = bytes;
          return p;
        },
        [this](void* p) { live.erase(p); }, segment_bytes);
  }
};

constexpr std::size_t kMiB = std::size_t{1} << 20;

std::uintptr_t at(void* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(CachingAllocator, TensorsAreAlignedSubRangesOfFewSegments) {
  FakeDevice device;
  {
    CachingAllocator a = device.allocator(64 * kMiB);
    void* x = a.allocate(10, 1);
    void* y = a.allocate(1000, 1);
    void* z = a.allocate(3 * kMiB, 1);
    EXPECT_EQ(device.live.size(), 1u);
    EXPECT_EQ(at(y), at(x) + 512);
    EXPECT_EQ(at(z), at(y) + 1024);
    EXPECT_EQ(a.stats().segments, 1u);
    EXPECT_EQ(a.stats().segment_bytes, 64 * kMiB);
    EXPECT_EQ(a.stats().allocated_bytes, 512u + 1024u + 3 * kMiB);
    // Larger than a segment: one of its own, rounded up to 2 MiB.
    void* big = a.allocate(65 * kMiB + 1, 1);
    EXPECT_EQ(device.live.size(), 2u);
    EXPECT_EQ(device.live.at(big), 66 * kMiB);
  }
  EXPECT_TRUE(device.live.empty());  // every segment given back
}

TEST(CachingAllocator, AFreedBlockIsReusedOnItsStreamOnly) {
  FakeDevice device;
  CachingAllocator a = device.allocator(2 * kMiB);
  void* x = a.allocate(4096, 1);
  a.allocate(4096, 1);
  a.release(x);
  EXPECT_EQ(a.allocate(4000, 1), x);  // best fit, same stream
  a.release(x);
  void* other = a.allocate(4096, 2);  // another stream: its own segment
  EXPECT_NE(other, x);
  EXPECT_EQ(a.stats().segments, 2u);
  EXPECT_EQ(a.stats().peak_allocated_bytes, 2u * 4096);
}

TEST(CachingAllocator, NeighboursMergeWhenFreed) {
  FakeDevice device;
  CachingAllocator a = device.allocator(2 * kMiB);
  void* x = a.allocate(kMiB / 2, 7);
  void* y = a.allocate(kMiB / 2, 7);
  void* z = a.allocate(kMiB / 2, 7);
  a.release(x);
  a.release(z);
  a.release(y);  // x, y, z and the free rest are one block again
  EXPECT_EQ(a.allocate(2 * kMiB, 7), x);
  EXPECT_EQ(a.stats().segments, 1u);
  EXPECT_EQ(a.stats().allocated_bytes, 2 * kMiB);
}

TEST(CachingAllocator, ABlockUsedOnAnotherStreamIsReusedOnlyOnceThatUseFinished) {
  FakeDevice device;
  CachingAllocator a = device.allocator(4 * kMiB);
  void* x = a.allocate(kMiB, 1);
  bool finished = false;
  a.releaseWhen(x, [&finished] { return finished; });
  EXPECT_THROW(a.releaseWhen(x, [] { return true; }), std::logic_error);  // twice
  EXPECT_EQ(a.stats().allocated_bytes, kMiB);
  void* y = a.allocate(kMiB, 1);  // x's use on the other stream has not finished: elsewhere
  EXPECT_NE(y, x);
  finished = true;
  EXPECT_EQ(a.allocate(kMiB, 1), x);  // asked again at this allocation: finished, reused
  EXPECT_EQ(a.stats().allocated_bytes, 2 * kMiB);
}

TEST(CachingAllocator, SaysWhenTheDeviceIsFullAndRefusesForeignPointers) {
  FakeDevice device;
  device.room = 4 * kMiB;
  CachingAllocator a = device.allocator(4 * kMiB);
  void* x = a.allocate(kMiB, 1);
  try {
    a.allocate(8 * kMiB, 1);
    FAIL() << "allocated beyond the device";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "the caching allocator could not get a new segment of 8 MiB from the device (it holds 1 segment(s), "
                 "4 MiB, 1 MiB of them in use)");
  }
  EXPECT_THROW(a.release(reinterpret_cast<void*>(at(x) + 512)), std::logic_error);
  a.release(x);
  EXPECT_THROW(a.release(x), std::logic_error);  // twice
}

}  // namespace
}  // namespace framework_trainer
