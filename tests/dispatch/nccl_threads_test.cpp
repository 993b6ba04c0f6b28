// The threads NCCL starts are known as NCCL's: a thread created while its creator is inside a
// call of the real NCCL, or by one of NCCL's threads; no other.
#include <gtest/gtest.h>

#include <pthread.h>

#include <thread>

#include "syncopate/dispatch/layer.hpp"
#include "syncopate/dispatch/nccl_threads.hpp"

namespace syncopate::preload {
namespace {

// Whether a thread started now (through pthread_create, as std::thread does) is NCCL's.
bool startedThreadIsNcclThread() {
  bool seen = false;
  std::thread([&seen] { seen = onNcclThread(); }).join();
  return seen;
}

TEST(NcclThreads, AThreadStartedOutsideNcclIsTheApplications) {
  EXPECT_FALSE(insideNccl());
  EXPECT_FALSE(startedThreadIsNcclThread());
}

TEST(NcclThreads, AThreadStartedInsideAnNcclCallIsNcclsAndSoAreTheThreadsItStarts) {
  bool nested = false, nested_inside = false;
  {
    const NcclCallScope inside;
    EXPECT_TRUE(insideNccl());
    EXPECT_FALSE(onNcclThread()) << "the caller's own thread stays the application's";
    std::thread([&] {
      EXPECT_TRUE(onNcclThread());
      std::thread([&] {
        nested = onNcclThread();
        nested_inside = insideNccl();
      }).join();
    }).join();
  }
  EXPECT_TRUE(nested);
  EXPECT_TRUE(nested_inside);
  EXPECT_FALSE(insideNccl()) << "the scope ends with the call";
  EXPECT_FALSE(startedThreadIsNcclThread());
}

TEST(NcclThreads, ThreadsStartedThroughPthreadCreateDirectlyAreFollowedToo) {
  const NcclCallScope inside;
  pthread_t thread;
  bool seen = false;
  ASSERT_EQ(pthread_create(
                &thread, nullptr,
                [](void* out) -> void* {
                  *static_cast<bool*>(out) = onNcclThread();
                  return nullptr;
                },
                &seen),
            0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace syncopate::preload
