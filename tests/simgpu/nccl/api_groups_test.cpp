// Group semantics through libnccl.so.2: sends and receives in any order, nesting, several
// communicators in one group, one communicator on several streams, and argument errors
// inside a group.
#include "api_fixture.hpp"
#include "reference.hpp"

#include <chrono>
#include <thread>

namespace simgpu::nccl {
namespace {

using testing::DeviceBuffer;
using testing::FourDevices;
using testing::inputOf;

using Groups = FourDevices;

std::vector<DeviceBuffer> buffersOf(std::size_t bytes, int n = 4) {
  std::vector<DeviceBuffer> out;
  for (int d = 0; d < n; ++d) out.emplace_back(d, bytes);
  return out;
}

// Rank d sends to d+1 and receives from d-1; even ranks call send first, odd ranks receive
// first; messages are large enough to need many chunks.
TEST_F(Groups, SendRecvRingInAnyOrder) {
  constexpr std::size_t kCount = 100'000;
  for (int round = 0; round < 3; ++round) {
    auto send = buffersOf(kCount * 8), recv = buffersOf(kCount * 8);
    for (int d = 0; d < kDevices; ++d) send[d].fill(inputOf(ncclInt64, d, kCount, round));
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int d = 0; d < kDevices; ++d) {
      const int next = (d + 1) % kDevices, prev = (d + kDevices - 1) % kDevices;
      if (d % 2 == 0) {
        ASSERT_EQ(ncclSend(send[d].get(), kCount, ncclInt64, next, comms[d], streams[d]), ncclSuccess);
        ASSERT_EQ(ncclRecv(recv[d].get(), kCount, ncclInt64, prev, comms[d], streams[d]), ncclSuccess);
      } else {
        ASSERT_EQ(ncclRecv(recv[d].get(), kCount, ncclInt64, prev, comms[d], streams[d]), ncclSuccess);
        ASSERT_EQ(ncclSend(send[d].get(), kCount, ncclInt64, next, comms[d], streams[d]), ncclSuccess);
      }
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    syncAll();
    for (int d = 0; d < kDevices; ++d) {
      EXPECT_EQ(recv[d].contents(), inputOf(ncclInt64, (d + kDevices - 1) % kDevices, kCount, round));
    }
  }
}

// An all-to-all made of sends and receives to every peer (and itself), in one group.
TEST_F(Groups, AllPairsExchange) {
  constexpr std::size_t kCount = 5000;
  auto send = buffersOf(kCount * 4 * kDevices), recv = buffersOf(kCount * 4 * kDevices);
  for (int d = 0; d < kDevices; ++d) send[d].fill(inputOf(ncclFloat32, d, kCount * kDevices));
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) {
    for (int peer = 0; peer < kDevices; ++peer) {
      const int p = (d + peer) % kDevices;  // a different order on every rank
      ASSERT_EQ(ncclRecv(recv[d].bytes() + p * kCount * 4, kCount, ncclFloat32, p, comms[d], streams[d]), ncclSuccess);
      ASSERT_EQ(ncclSend(send[d].bytes() + p * kCount * 4, kCount, ncclFloat32, p, comms[d], streams[d]), ncclSuccess);
    }
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  syncAll();
  for (int d = 0; d < kDevices; ++d) {
    for (int p = 0; p < kDevices; ++p) {
      const std::vector<char> from_p = inputOf(ncclFloat32, p, kCount * kDevices);
      const std::vector<char> part(from_p.begin() + d * kCount * 4, from_p.begin() + (d + 1) * kCount * 4);
      EXPECT_EQ(std::vector<char>(recv[d].bytes() + p * kCount * 4, recv[d].bytes() + (p + 1) * kCount * 4), part);
    }
  }
}

TEST_F(Groups, NestedGroupsLaunchAtTheOutermostEnd) {
  auto bufs = buffersOf(64 * 4);
  for (int d = 0; d < kDevices; ++d) bufs[d].fill(inputOf(ncclInt32, d, 64));
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) {
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    ASSERT_EQ(ncclAllReduce(bufs[d].get(), bufs[d].get(), 64, ncclInt32, ncclSum, comms[d], streams[d]), ncclSuccess);
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  }
  // Nothing ran yet: the inner ends only closed inner groups.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int d = 0; d < kDevices; ++d) EXPECT_EQ(bufs[d].contents(), inputOf(ncclInt32, d, 64));
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  syncAll();
  std::vector<std::vector<char>> inputs;
  for (int d = 0; d < kDevices; ++d) inputs.push_back(inputOf(ncclInt32, d, 64));
  CollectiveArgs a;
  a.datatype = ncclInt32;
  a.count = 64;
  for (int d = 0; d < kDevices; ++d) EXPECT_EQ(bufs[d].contents(), testing::expected(a, kDevices, d, inputs));
}

TEST_F(Groups, GroupEndWithoutStartIsInvalidUsage) { EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage); }

TEST_F(Groups, AnArgumentErrorFailsTheWholeGroup) {
  auto bufs = buffersOf(16 * 4);
  for (int d = 0; d < kDevices; ++d) bufs[d].fill(inputOf(ncclFloat32, d, 16));
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) {
    ASSERT_EQ(ncclAllReduce(bufs[d].get(), bufs[d].get(), 16, ncclFloat32, ncclSum, comms[d], streams[d]), ncclSuccess);
  }
  EXPECT_EQ(ncclBroadcast(bufs[0].get(), bufs[0].get(), 16, ncclFloat32, /*root=*/7, comms[0], streams[0]), ncclInvalidArgument);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidArgument);
  syncAll();
  for (int d = 0; d < kDevices; ++d) EXPECT_EQ(bufs[d].contents(), inputOf(ncclFloat32, d, 16));
  // The communicators are still fine, and the next group runs.
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) {
    ASSERT_EQ(ncclAllReduce(bufs[d].get(), bufs[d].get(), 16, ncclFloat32, ncclSum, comms[d], streams[d]), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  syncAll();
  for (int d = 0; d < kDevices; ++d) EXPECT_EQ(asyncError(d), ncclSuccess);
}

// Two communicators in one group, entered in opposite orders by odd and even ranks, on the
// same streams.
TEST_F(Groups, SeveralCommunicatorsInOneGroup) {
  std::array<ncclComm_t, kDevices> other{};
  ASSERT_EQ(ncclCommInitAll(other.data(), kDevices, nullptr), ncclSuccess);
  auto a = buffersOf(100 * 4), b = buffersOf(100 * 4), gathered = buffersOf(100 * 4 * kDevices);
  for (int d = 0; d < kDevices; ++d) {
    a[d].fill(inputOf(ncclFloat32, d, 100, 1));
    b[d].fill(inputOf(ncclFloat32, d, 100, 2));
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) {
    auto reduce = [&] { return ncclAllReduce(a[d].get(), a[d].get(), 100, ncclFloat32, ncclSum, comms[d], streams[d]); };
    auto gather = [&] { return ncclAllGather(b[d].get(), gathered[d].get(), 100, ncclFloat32, other[d], streams[d]); };
    if (d % 2 == 0) {
      ASSERT_EQ(reduce(), ncclSuccess);
      ASSERT_EQ(gather(), ncclSuccess);
    } else {
      ASSERT_EQ(gather(), ncclSuccess);
      ASSERT_EQ(reduce(), ncclSuccess);
    }
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  syncAll();
  std::vector<std::vector<char>> in_a, in_b;
  for (int d = 0; d < kDevices; ++d) {
    in_a.push_back(inputOf(ncclFloat32, d, 100, 1));
    in_b.push_back(inputOf(ncclFloat32, d, 100, 2));
  }
  CollectiveArgs ar;
  ar.count = 100;
  CollectiveArgs ag = ar;
  ag.kind = CollKind::AllGather;
  for (int d = 0; d < kDevices; ++d) {
    EXPECT_EQ(a[d].contents(), testing::expected(ar, kDevices, d, in_a));
    EXPECT_EQ(gathered[d].contents(), testing::expected(ag, kDevices, d, in_b));
    EXPECT_EQ(ncclCommDestroy(other[d]), ncclSuccess);
  }
}

// Calls on one communicator run in the order they were issued even on different streams:
// otherwise the second call of one rank would meet the first of another (and mismatch).
TEST_F(Groups, OneCommunicatorOnTwoStreamsKeepsIssueOrder) {
  std::array<cudaStream_t, kDevices> second{};
  for (int d = 0; d < kDevices; ++d) second[d] = testing::makeStream(d);
  auto x = buffersOf(1000 * 4), y = buffersOf(3000 * 4);
  for (int round = 0; round < 5; ++round) {
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int d = 0; d < kDevices; ++d) {
      ASSERT_EQ(ncclAllReduce(x[d].get(), x[d].get(), 1000, ncclFloat32, ncclSum, comms[d], streams[d]), ncclSuccess);
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int d = 0; d < kDevices; ++d) {
      ASSERT_EQ(ncclAllReduce(y[d].get(), y[d].get(), 3000, ncclFloat32, ncclMax, comms[d], second[d]), ncclSuccess);
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  }
  for (int d = 0; d < kDevices; ++d) {
    testing::sync(streams[d]);
    testing::sync(second[d]);
    EXPECT_EQ(asyncError(d), ncclSuccess);
    simgpu::destroyStream(second[d]);
  }
}

TEST_F(Groups, SimulateEndEstimatesWithoutRunning) {
  auto bufs = buffersOf(1 << 20);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) {
    ASSERT_EQ(ncclAllReduce(bufs[d].get(), bufs[d].get(), 1 << 18, ncclFloat32, ncclSum, comms[d], streams[d]), ncclSuccess);
  }
  ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
  ASSERT_EQ(ncclGroupSimulateEnd(&info), ncclSuccess);
  // 4 ranks on 2 emulated hosts: the ring crosses the inter-host link (10 us, 10 GB/s).
  const double expected_us = 6 * 10.0 + 1.5 * (1 << 20) / 1e10 * 1e6;
  EXPECT_NEAR(info.estimatedTime, expected_us, 0.01);
  ncclSimInfo_t bad{};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclGroupSimulateEnd(&bad), ncclInvalidArgument);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
}

}  // namespace
}  // namespace simgpu::nccl
