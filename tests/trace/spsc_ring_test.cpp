#include "syncopate/trace/spsc_ring.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "syncopate/trace/records.hpp"

namespace syncopate::trace {
namespace {

struct Item {
  std::uint64_t seq;
  std::uint64_t check;  // seq * 3 + 1: a torn or stale slot would not match
};

std::vector<std::uint64_t> drainAll(SpscRing<Item>& ring) {
  std::vector<std::uint64_t> out;
  ring.drain([&](std::span<const Item> items) {
    for (const Item& i : items) out.push_back(i.seq);
  });
  return out;
}

TEST(SpscRing, CapacityIsRoundedUpToAPowerOfTwo) {
  EXPECT_EQ(SpscRing<Record>::create(1000)->capacity(), 1024u);
  EXPECT_EQ(SpscRing<Record>::create(1024)->capacity(), 1024u);
  EXPECT_EQ(SpscRing<Record>::create(0)->capacity(), 2u);
  EXPECT_EQ(SpscRing<Record>::create(std::size_t{1} << 50), nullptr);  // refused, not thrown
}

// A producer's push never takes a page fault: every page of the ring is resident once it is made
// (mincore), not faulted in a page at a time as the first pass reaches it.
TEST(SpscRing, EveryPageIsResidentOnceMade) {
  auto ring = SpscRing<Record>::create(std::size_t{1} << 16);
  ASSERT_NE(ring, nullptr);
  ASSERT_TRUE(ring->tryReserve(1));
  void* const slots = &ring->reserved(0);  // the first slot: the start of the mapping
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t bytes = ring->capacity() * sizeof(Record);
  std::vector<unsigned char> resident((bytes + page - 1) / page);
  ASSERT_EQ(mincore(slots, bytes, resident.data()), 0);
  for (std::size_t i = 0; i < resident.size(); ++i) EXPECT_TRUE(resident[i] & 1u) << "page " << i << " of " << resident.size();
}

TEST(SpscRing, AFullRingRefusesAndCountsEachDrop) {
  auto ring = SpscRing<Item>::create(4);
  for (std::uint64_t i = 0; i < 4; ++i) EXPECT_TRUE(ring->tryPush(Item{i, i * 3 + 1}));
  EXPECT_FALSE(ring->tryPush(Item{4, 13}));
  EXPECT_FALSE(ring->tryPush(Item{5, 16}));
  EXPECT_EQ(ring->dropped(), 2u);
  EXPECT_EQ(ring->pushed(), 4u);
  EXPECT_EQ(drainAll(*ring), (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_TRUE(ring->tryPush(Item{6, 19}));
  EXPECT_EQ(drainAll(*ring), (std::vector<std::uint64_t>{6}));
}

TEST(SpscRing, DrainHandsOutTwoSpansAcrossTheWrap) {
  auto ring = SpscRing<Item>::create(4);
  for (std::uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(ring->tryPush(Item{i, 0}));
  drainAll(*ring);
  for (std::uint64_t i = 3; i < 7; ++i) ASSERT_TRUE(ring->tryPush(Item{i, 0}));  // slots 3, 0, 1, 2
  std::vector<std::size_t> span_sizes;
  std::vector<std::uint64_t> seen;
  EXPECT_EQ(ring->drain([&](std::span<const Item> items) {
    span_sizes.push_back(items.size());
    for (const Item& i : items) seen.push_back(i.seq);
  }),
            4u);
  EXPECT_EQ(span_sizes, (std::vector<std::size_t>{1, 3}));
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{3, 4, 5, 6}));
}

TEST(SpscRing, AMultiItemPushIsAllOrNothing) {
  auto ring = SpscRing<Item>::create(4);
  const Item three[] = {{0, 0}, {1, 0}, {2, 0}};
  EXPECT_TRUE(ring->tryPush(std::span<const Item>(three)));
  EXPECT_FALSE(ring->tryPush(std::span<const Item>(three)));  // only one slot left
  EXPECT_EQ(ring->dropped(), 3u);
  EXPECT_EQ(ring->sizeApprox(), 3u);
}

// Items built in place: nothing is visible before publish(), a reservation wraps around the
// end of the storage, and one that does not fit is refused whole and counted.
TEST(SpscRing, ItemsBuiltInPlaceArePublishedTogether) {
  auto ring = SpscRing<Item>::create(4);
  for (std::uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(ring->tryPush(Item{i, 0}));
  ASSERT_EQ(ring->drain([](std::span<const Item>) {}), 3u);
  ASSERT_TRUE(ring->tryReserve(3));
  for (std::uint64_t i = 0; i < 3; ++i) ring->reserved(i) = Item{10 + i, 0};  // slots 3, 0, 1
  EXPECT_EQ(ring->sizeApprox(), 0u);
  ring->publish(3);
  EXPECT_FALSE(ring->tryReserve(2));
  EXPECT_EQ(ring->dropped(), 2u);
  std::vector<std::uint64_t> seen;
  ring->drain([&](std::span<const Item> items) {
    for (const Item& item : items) seen.push_back(item.seq);
  });
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{10, 11, 12}));
}

// One producer pushing as fast as it can into a small ring, one consumer draining: every
// push is either received, in order and intact, or counted as dropped — exactly.
TEST(SpscRing, TwoThreadsLoseNothingUncounted) {
  constexpr std::uint64_t kPushes = 2'000'000;
  auto ring = SpscRing<Item>::create(256);
  std::uint64_t accepted = 0;
  std::uint64_t accepted_sum = 0;
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < kPushes; ++i) {
      if (ring->tryPush(Item{i, i * 3 + 1})) {
        ++accepted;
        accepted_sum += i;
      }
    }
  });
  std::uint64_t received = 0;
  std::uint64_t received_sum = 0;
  std::uint64_t last = 0;
  bool ordered = true;
  bool intact = true;
  const auto consume = [&](std::span<const Item> items) {
    for (const Item& item : items) {
      ordered = ordered && (received == 0 || item.seq > last);
      intact = intact && item.check == item.seq * 3 + 1;
      last = item.seq;
      ++received;
      received_sum += item.seq;
    }
  };
  // Drain until the producer has finished and the ring is empty.
  for (;;) {
    const bool done = ring->pushed() + ring->dropped() == kPushes;
    ring->drain(consume);
    if (done && ring->sizeApprox() == 0) break;
  }
  producer.join();
  ring->drain(consume);
  EXPECT_TRUE(ordered);
  EXPECT_TRUE(intact);
  EXPECT_EQ(received, accepted);
  EXPECT_EQ(received_sum, accepted_sum);
  EXPECT_EQ(ring->dropped(), kPushes - accepted);
  EXPECT_EQ(ring->pushed(), accepted);
}

// Pairs pushed together are never split between drains.
TEST(SpscRing, ConcurrentPairsArriveWhole) {
  constexpr std::uint64_t kPairs = 500'000;
  auto ring = SpscRing<Item>::create(64);
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < kPairs; ++i) {
      const Item pair[] = {{2 * i, 0}, {2 * i + 1, 0}};
      ring->tryPush(std::span<const Item>(pair));
    }
  });
  std::uint64_t drains_with_split_pair = 0;
  std::uint64_t received = 0;
  const auto consume_drain = [&] {
    std::vector<std::uint64_t> got = drainAll(*ring);
    received += got.size();
    if (got.size() % 2 != 0) ++drains_with_split_pair;
    for (std::size_t i = 0; i + 1 < got.size(); i += 2) {
      if (got[i] % 2 != 0 || got[i + 1] != got[i] + 1) ++drains_with_split_pair;
    }
  };
  while (ring->pushed() + ring->dropped() < 2 * kPairs) consume_drain();
  producer.join();
  consume_drain();
  EXPECT_EQ(drains_with_split_pair, 0u);
  EXPECT_EQ(received + ring->dropped(), 2 * kPairs);
}

}  // namespace
}  // namespace syncopate::trace
