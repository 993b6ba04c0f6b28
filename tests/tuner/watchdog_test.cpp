// The runtime's watchdog (tuner/runtime/src/watchdog.hpp) on its own, with a unit that never
// completes: a host whose synchronisations keep returning is running ahead of a device that
// moves, and is left alone however long the unit stays pending; once the device shows no
// progress for the limit, the stall is reported, once per check, with the quiet time.
#include "watchdog.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace syncopate::preload {
namespace {

constexpr std::int64_t kLimitNs = 400'000'000;

struct Stalls {
  std::atomic<int> count{0};
  std::atomic<std::int64_t> waited_ns{0};
};

TEST(Watchdog, APendingUnitIsAStallOnlyOnceTheDeviceShowsNoProgressForTheLimit) {
  Stalls stalls;
  Watchdog dog;
  dog.start(
      kLimitNs, [](std::uint32_t) { return true; },
      [&](Watchdog::Stall what, std::int64_t waited_ns) {
        EXPECT_EQ(what, Watchdog::Stall::Unit);
        stalls.waited_ns.store(waited_ns);
        stalls.count.fetch_add(1);
      });
  dog.unitIssued(7);
  // Three limits long, the host's synchronisations return every 100 ms.
  for (int i = 0; i < 12; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    dog.deviceProgressed();
  }
  EXPECT_EQ(stalls.count.load(), 0) << "a unit pending behind a device that moves is not a stall";
  // Then nothing returns.
  const auto quiet = std::chrono::steady_clock::now();
  while (stalls.count.load() == 0 && std::chrono::steady_clock::now() - quiet < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  dog.stop();
  ASSERT_GE(stalls.count.load(), 1);
  EXPECT_GT(stalls.waited_ns.load(), kLimitNs);
}

TEST(Watchdog, ACompletedUnitIsNeverAStall) {
  std::atomic<int> stalls{0};
  Watchdog dog;
  dog.start(kLimitNs, [](std::uint32_t) { return false; }, [&](Watchdog::Stall, std::int64_t) { stalls.fetch_add(1); });
  dog.unitIssued(3);
  std::this_thread::sleep_for(std::chrono::milliseconds(900));
  dog.stop();
  EXPECT_EQ(stalls.load(), 0);
}

}  // namespace
}  // namespace syncopate::preload
