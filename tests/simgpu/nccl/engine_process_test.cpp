// The transport between ranks that are separate processes (forked here; the MPI tests drive
// the same through libnccl.so.2): results, a peer that dies, and shared memory clean-up.
#include "engine_harness.hpp"
#include "simgpu/nccl/stale_segments.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>

namespace simgpu::nccl {
namespace {

using testing::inputOf;
using testing::join;
using testing::kAllOps;
using testing::kAllTypes;
using testing::onProcesses;
using testing::runOne;

const CostParams kCost = testing::testCost();

bool segmentExists(const CommKey& key) {
  return std::filesystem::exists("/dev/shm" + segmentName(key));
}

// Makes the segment's file `seconds` older.
void backdate(const CommKey& key, int seconds) {
  const std::string path = "/dev/shm" + segmentName(key);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  timespec times[2] = {st.st_atim, st.st_mtim};
  times[0].tv_sec -= seconds;
  times[1].tv_sec -= seconds;
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

TEST(Processes, AllReduceAndAllGatherOfEveryTypeOnFourProcesses) {
  constexpr int kRanks = 4;
  constexpr std::size_t kCount = 333;
  const CommKey key = randomCommKey();
  const auto codes = onProcesses(kRanks, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    if (Status st = join(key, kRanks, rank, 512, &ep); !st.ok()) return testing::report(st, 10);
    for (ncclDataType_t type : kAllTypes) {
      const std::size_t es = datatypeSize(type);
      std::vector<std::vector<char>> inputs;
      std::vector<const void*> ptrs;
      for (int r = 0; r < kRanks; ++r) inputs.push_back(inputOf(type, r, kCount));
      for (const auto& in : inputs) ptrs.push_back(in.data());
      for (RedOp op : kAllOps) {
        std::vector<char> recv(kCount * es), want(kCount * es);
        CollectiveArgs a;
        a.datatype = type;
        a.op = op;
        a.count = kCount;
        a.send = inputs[static_cast<std::size_t>(rank)].data();
        a.recv = recv.data();
        CollectiveTask task(*ep, a, kCost);
        if (Status st = runOne(task); !st.ok()) return testing::report(st, 11);
        reduceInRankOrder(type, op, ptrs.data(), kRanks, want.data(), kCount);
        if (recv != want) return 12;
      }
      std::vector<char> gathered(kRanks * kCount * es), want;
      for (const auto& in : inputs) want.insert(want.end(), in.begin(), in.end());
      CollectiveArgs a;
      a.kind = CollKind::AllGather;
      a.datatype = type;
      a.count = kCount;
      a.send = inputs[static_cast<std::size_t>(rank)].data();
      a.recv = gathered.data();
      CollectiveTask task(*ep, a, kCost);
      if (Status st = runOne(task); !st.ok()) return testing::report(st, 13);
      if (gathered != want) return 14;
    }
    return 0;
  });
  for (int c : codes) EXPECT_EQ(c, 0);
  EXPECT_FALSE(segmentExists(key));
}

TEST(Processes, APeerThatDiesFailsTheOthersQuickly) {
  const CommKey key = randomCommKey();
  const auto started = std::chrono::steady_clock::now();
  const auto codes = onProcesses(3, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    Status st = join(key, 3, rank, 0, &ep);
    if (rank == 2) _exit(st.ok() ? 0 : 10);  // dies without leaving the communicator
    if (st.ok()) {
      std::vector<float> buf(1 << 16);
      CollectiveArgs a;
      a.count = buf.size();
      a.send = buf.data();
      a.recv = buf.data();
      CollectiveTask task(*ep, a, kCost);
      st = runOne(task);
    }
    // A rank still joining when rank 0 found the death fails to join, with the same reason.
    if (st.code != ncclRemoteError || st.message.find("rank 2 (process") == std::string::npos) {
      return testing::report(st, 11);
    }
    return 0;
  });
  for (int c : codes) EXPECT_EQ(c, 0);
  // Far below the 20 s timeout: the death is noticed, not waited out.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

TEST(Processes, SegmentNameGoesOnceAllRanksJoined) {
  const CommKey key = randomCommKey();
  const auto codes = onProcesses(2, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    if (Status st = join(key, 2, rank, 0, &ep); !st.ok()) return testing::report(st, 10);
    return segmentExists(key) ? 11 : 0;
  });
  for (int c : codes) EXPECT_EQ(c, 0);
}

TEST(Processes, LeftoversOfDeadJobsAreRemovedAndLiveOnesKept) {
  // A job whose only attached rank died while waiting for its peer leaves a name behind.
  const CommKey dead = randomCommKey();
  const auto codes = onProcesses(1, [&](int) {
    std::unique_ptr<Endpoint> ep;
    if (!Endpoint::attach(dead, 2, 0, {0, 0, getpid()}, makeGeometry(2, 0), 1'000'000'000, &ep).ok()) return 10;
    _exit(0);
  });
  ASSERT_EQ(codes[0], 0);
  ASSERT_TRUE(segmentExists(dead));
  // A live one: this process is attached and could still be joined.
  const CommKey live = randomCommKey();
  std::unique_ptr<Endpoint> ep;
  ASSERT_TRUE(Endpoint::attach(live, 2, 0, {0, 0, getpid()}, makeGeometry(2, 0), 1'000'000'000, &ep).ok());
  // Both look old; segments other tests are creating right now are young and left alone.
  backdate(dead, 120);
  backdate(live, 120);
  EXPECT_GE(removeStaleSegments("/dev/shm", 60'000'000'000), 1);
  EXPECT_FALSE(segmentExists(dead));
  EXPECT_TRUE(segmentExists(live));
  // A failed join leaves nothing behind either.
  ep.reset();
  EXPECT_FALSE(segmentExists(live));
}

}  // namespace
}  // namespace simgpu::nccl
