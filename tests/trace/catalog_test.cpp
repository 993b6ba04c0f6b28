#include "syncopate/trace/catalog.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace syncopate::trace {
namespace {

TEST(Catalog, StringsGetDenseIdsFromOne) {
  Catalog catalog;
  ASSERT_TRUE(catalog.valid());
  EXPECT_EQ(catalog.intern("cudaLaunchKernel"), 1u);
  EXPECT_EQ(catalog.intern("ncclAllReduce"), 2u);
  EXPECT_EQ(catalog.intern("cudaLaunchKernel"), 1u);
  EXPECT_EQ(catalog.intern(""), 3u);  // the empty name is a name too
  EXPECT_EQ(catalog.stringCount(), 3u);
  EXPECT_EQ(catalog.string(2), "ncclAllReduce");
  EXPECT_EQ(catalog.string(kNoString), "");
  EXPECT_EQ(catalog.string(99), "");
  EXPECT_EQ(catalog.findString("ncclAllReduce"), 2u);
  EXPECT_EQ(catalog.findString("never seen"), kNoString);
  EXPECT_EQ(catalog.stringCount(), 3u);  // find does not register
}

TEST(Catalog, ViewsStayValidWhileTheTablesGrow) {
  Catalog catalog;
  const StringId first = catalog.intern("ProfilerStep#0");
  const std::string_view view = catalog.string(first);
  std::string big(100'000, 'k');  // larger than an arena block
  for (int i = 0; i < 50'000; ++i) catalog.intern("name-" + std::to_string(i));
  const StringId big_id = catalog.intern(big);
  for (int i = 50'000; i < 60'000; ++i) catalog.intern("name-" + std::to_string(i));
  EXPECT_EQ(view, "ProfilerStep#0");
  EXPECT_EQ(view.data(), catalog.string(first).data());
  EXPECT_EQ(catalog.string(big_id), big);
  EXPECT_EQ(catalog.findString("name-12345"), catalog.intern("name-12345"));
  EXPECT_EQ(catalog.stringCount(), 60'002u);
}

TEST(Catalog, LaunchShapesAreInternedWhole) {
  Catalog catalog;
  const StringId name = catalog.intern("gemm");
  const LaunchShape a{name, {128, 2, 1}, {256, 1, 1}};
  const LaunchShape b{name, {128, 2, 1}, {128, 1, 1}};
  const ShapeId ia = catalog.internShape(a);
  const ShapeId ib = catalog.internShape(b);
  EXPECT_NE(ia, ib);
  EXPECT_EQ(catalog.internShape(a), ia);
  EXPECT_EQ(catalog.shape(ia), a);
  EXPECT_EQ(catalog.shape(ib), b);
  EXPECT_EQ(catalog.shape(77), LaunchShape{});
}

TEST(Catalog, StreamsAreKeyedByDeviceAndHandle) {
  Catalog catalog;
  CatalogStream legacy0{0, 0, 0u, 0, catalog.intern("default")};
  CatalogStream legacy1{1, 0, 0u, 0, catalog.intern("default")};
  const StreamId s0 = catalog.registerStream(legacy0);
  const StreamId s1 = catalog.registerStream(legacy1);
  EXPECT_NE(s0, s1);
  CatalogStream again = legacy0;
  again.priority = -5;
  EXPECT_EQ(catalog.registerStream(again), s0);
  EXPECT_EQ(catalog.stream(s0)->priority, 0);  // the first registration wins
  EXPECT_EQ(catalog.findStream(1, 0), s1);
  EXPECT_EQ(catalog.findStream(2, 0), kNoStream);
  EXPECT_FALSE(catalog.stream(kNoStream).has_value());
  EXPECT_EQ(catalog.streamCount(), 2u);
}

TEST(Catalog, AReusedCommunicatorHandlePointsToTheNewestCommunicator) {
  Catalog catalog;
  CatalogCommunicator first{0x1111, 0, 4, 0, 0xABC, 10, std::nullopt};
  CatalogCommunicator second{0x2222, 0, 4, 0, 0xABC, 20, 0x1111u};
  const CommId c1 = catalog.registerCommunicator(first);
  EXPECT_EQ(catalog.findCommunicator(0xABC), c1);
  const CommId c2 = catalog.registerCommunicator(second);
  EXPECT_NE(c1, c2);
  EXPECT_EQ(catalog.findCommunicator(0xABC), c2);
  EXPECT_EQ(catalog.communicator(c1)->comm_id, 0x1111u);
  EXPECT_EQ(catalog.communicator(c2)->parent_comm_id, 0x1111u);
  EXPECT_EQ(catalog.registerCommunicator(first), c1);  // same (comm_id, rank): same id
  EXPECT_EQ(catalog.findCommunicator(0xABC), c1);
}

TEST(Catalog, EventsThreadsAndDevices) {
  Catalog catalog;
  const EventId e = catalog.eventId(0x7f00'0000'1000);
  EXPECT_EQ(catalog.eventId(0x7f00'0000'1000), e);
  EXPECT_EQ(catalog.findEvent(0x7f00'0000'1000), e);
  EXPECT_EQ(catalog.findEvent(0x1), kNoEvent);

  const ThreadId t = catalog.registerThread({4242, catalog.intern("trainer")});
  EXPECT_EQ(catalog.findThread(4242), t);
  EXPECT_EQ(catalog.thread(t)->name_id, catalog.findString("trainer"));

  CatalogDevice d{1, catalog.intern("simgpu H100"), kNoString, kNoString, 132, 80LL << 30};
  EXPECT_EQ(catalog.registerDevice(d), 1u);
  EXPECT_EQ(catalog.registerDevice(d), 1u);
  EXPECT_EQ(catalog.deviceCount(), 1u);
  EXPECT_EQ(catalog.deviceAt(1)->sm_count, 132);
}

// Many threads register overlapping names in different orders while others look them up:
// every thread sees one id per name, ids are dense, and no lookup ever returns a wrong id.
TEST(Catalog, InternsConsistentlyFromManyThreads) {
  constexpr int kThreads = 8;
  constexpr int kShared = 20'000;
  constexpr int kOwn = 2'000;
  Catalog catalog;
  std::vector<std::string> shared;
  for (int i = 0; i < kShared; ++i) shared.push_back("kernel_" + std::to_string(i) + "_with_a_longer_name");

  std::vector<std::vector<StringId>> ids(kThreads, std::vector<StringId>(kShared));
  std::atomic<bool> writers_done{false};
  std::atomic<std::uint64_t> wrong_lookups{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<int> order(kShared);
      for (int i = 0; i < kShared; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), std::mt19937(t));
      for (int k = 0; k < kShared; ++k) {
        const int i = order[k];
        ids[t][i] = catalog.intern(shared[i]);
        if (k % 10 == 0) catalog.intern("own_" + std::to_string(t) + "_" + std::to_string(k / 10));
      }
    });
  }
  // Readers: whatever id a lookup returns must name the string looked up.
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937 rng(100 + r);
      while (!writers_done.load()) {
        const auto& name = shared[rng() % kShared];
        const StringId id = catalog.findString(name);
        if (id != kNoString && catalog.string(id) != name) wrong_lookups.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  writers_done = true;
  for (auto& r : readers) r.join();

  EXPECT_EQ(wrong_lookups.load(), 0u);
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(ids[t], ids[0]) << "thread " << t;
  const std::uint32_t total = kShared + kThreads * kOwn;
  EXPECT_EQ(catalog.stringCount(), total);
  std::set<StringId> distinct(ids[0].begin(), ids[0].end());
  EXPECT_EQ(distinct.size(), static_cast<std::size_t>(kShared));
  EXPECT_GE(*distinct.begin(), 1u);
  EXPECT_LE(*distinct.rbegin(), total);
  for (int i = 0; i < kShared; ++i) ASSERT_EQ(catalog.string(ids[0][i]), shared[i]);
  EXPECT_EQ(catalog.failedRegistrations(), 0u);
}

}  // namespace
}  // namespace syncopate::trace
