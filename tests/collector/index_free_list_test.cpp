// The free slots of a timing pool: every index pushed is popped once, the count follows pushes
// and pops, a run of new indices and a batch of released ones go in at once, and threads popping while another pushes
// never get one index twice.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "syncopate/collector/index_free_list.hpp"

namespace collector_test {
namespace {

using syncopate::preload::IndexFreeList;

TEST(IndexFreeList, PopsWhatWasPushedLastFirstAndCounts) {
  IndexFreeList list(16);
  ASSERT_TRUE(list.valid());
  EXPECT_EQ(list.pop(), IndexFreeList::kEmpty);
  EXPECT_EQ(list.size(), 0u);
  list.push(3);
  list.push(0);
  list.push(15);
  EXPECT_EQ(list.size(), 3u);
  EXPECT_EQ(list.pop(), 15u);
  EXPECT_EQ(list.pop(), 0u);
  EXPECT_EQ(list.size(), 1u);
  EXPECT_EQ(list.pop(), 3u);
  EXPECT_EQ(list.pop(), IndexFreeList::kEmpty);
  EXPECT_EQ(list.size(), 0u);
}

TEST(IndexFreeList, RunsGoInWholeAboveWhatIsThere) {
  IndexFreeList list(1024);
  list.push(1000);
  list.pushRun(0, 4);
  list.pushRun(4, 0);  // nothing
  EXPECT_EQ(list.size(), 5u);
  for (std::uint32_t expected : {0u, 1u, 2u, 3u, 1000u}) EXPECT_EQ(list.pop(), expected);
  EXPECT_EQ(list.pop(), IndexFreeList::kEmpty);
}

TEST(IndexFreeList, ABatchGoesInWholeInItsOwnOrderAboveWhatIsThere) {
  IndexFreeList list(1024);
  list.push(1000);
  const std::uint32_t released[] = {7, 512, 3, 1023};
  list.pushAll(released);
  list.pushAll({});  // nothing
  EXPECT_EQ(list.size(), 5u);
  for (std::uint32_t expected : {7u, 512u, 3u, 1023u, 1000u}) EXPECT_EQ(list.pop(), expected);
  EXPECT_EQ(list.pop(), IndexFreeList::kEmpty);
}

TEST(IndexFreeList, HoldsItsLargestCapacity) {
  IndexFreeList list(IndexFreeList::kMaxCapacity);
  ASSERT_TRUE(list.valid());
  list.pushRun(0, IndexFreeList::kMaxCapacity);
  EXPECT_EQ(list.size(), IndexFreeList::kMaxCapacity);
  EXPECT_EQ(list.pop(), 0u);
  list.push(0);
  EXPECT_EQ(list.size(), IndexFreeList::kMaxCapacity);
  EXPECT_FALSE(IndexFreeList(IndexFreeList::kMaxCapacity + 1).valid());
}

// Two threads take indices while a third puts back what they hand it, as the issuing threads
// and the background thread do: no index is ever held twice, and all come back.
TEST(IndexFreeList, ConcurrentPopsAndPushesNeverHandOutAnIndexTwice) {
  constexpr std::uint32_t kIndices = 64;
  constexpr int kTakesPerThread = 200000;
  IndexFreeList list(kIndices);
  list.pushRun(0, kIndices);
  std::atomic<int> holders[kIndices] = {};
  std::atomic<bool> twice{false};
  std::vector<std::atomic<std::uint32_t>> returned(kIndices * 4);
  std::atomic<std::uint64_t> returned_tail{0};

  auto taker = [&] {
    for (int taken = 0; taken < kTakesPerThread;) {
      const std::uint32_t index = list.pop();
      if (index == IndexFreeList::kEmpty) continue;
      if (holders[index].fetch_add(1) != 0) twice = true;
      holders[index].fetch_sub(1);
      // Handed to the returning thread (a bounded queue: at most kIndices are ever out).
      const std::uint64_t slot = returned_tail.fetch_add(1);
      returned[slot % returned.size()].store(index + 1, std::memory_order_release);
      ++taken;
    }
  };
  std::thread first(taker);
  std::thread second(taker);
  std::uint64_t given_back = 0;
  while (given_back < 2u * kTakesPerThread) {
    auto& slot = returned[given_back % returned.size()];
    const std::uint32_t value = slot.exchange(0, std::memory_order_acquire);
    if (value == 0) continue;
    list.push(value - 1);
    ++given_back;
  }
  first.join();
  second.join();
  EXPECT_FALSE(twice.load());
  EXPECT_EQ(list.size(), kIndices);
  std::set<std::uint32_t> all;
  for (std::uint32_t index = list.pop(); index != IndexFreeList::kEmpty; index = list.pop()) all.insert(index);
  EXPECT_EQ(all.size(), kIndices);
  EXPECT_EQ(*std::max_element(all.begin(), all.end()), kIndices - 1);
}

}  // namespace
}  // namespace collector_test
