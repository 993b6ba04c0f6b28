#include "sample_common/watchdog.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

namespace sample_common {
namespace {

using namespace std::chrono_literals;

TEST(Watchdog, ReportsWhatTheLoopWaitedFor) {
  std::promise<std::string> expired;
  Watchdog watchdog(100ms, [&](const std::string& what) { expired.set_value(what); });
  watchdog.progress("iteration 7 to complete");
  auto future = expired.get_future();
  ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(future.get(), "iteration 7 to complete");
}

TEST(Watchdog, ProgressKeepsItQuiet) {
  std::atomic<int> expirations{0};
  {
    Watchdog watchdog(300ms, [&](const std::string&) { ++expirations; });
    for (int i = 0; i < 10; ++i) {
      std::this_thread::sleep_for(50ms);
      watchdog.progress("next");
    }
  }
  EXPECT_EQ(expirations.load(), 0);
}

}  // namespace
}  // namespace sample_common
