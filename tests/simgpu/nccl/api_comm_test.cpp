// Making and managing communicators through libnccl.so.2: ncclCommInitAll with a device list,
// ncclCommInitRank from one thread in a group, non-blocking init, split, shrink, finalize,
// memory helpers, version, teams, and the stream operations simgpu's core sees.
#include "api_fixture.hpp"
#include "reference.hpp"
#include "simgpu/core/observer.hpp"
#include "simgpu/nccl/cost_model.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

namespace simgpu::nccl {
namespace {

using testing::DeviceBuffer;
using testing::FourDevices;
using testing::inputOf;

using testing::lastError;

class Comms : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { testing::useTestProfile(); }
};

// Runs an int32 sum all-reduce over `comms` (one per device listed) and checks the sums.
void expectAllReduceWorks(const std::vector<ncclComm_t>& comms, const std::vector<int>& devices) {
  std::vector<DeviceBuffer> bufs;
  std::vector<cudaStream_t> streams;
  for (std::size_t i = 0; i < comms.size(); ++i) {
    bufs.emplace_back(devices[i], 8 * sizeof(std::int32_t));
    std::fill_n(reinterpret_cast<std::int32_t*>(bufs.back().get()), 8, static_cast<std::int32_t>(i + 1));
    streams.push_back(testing::makeStream(devices[i]));
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (std::size_t i = 0; i < comms.size(); ++i) {
    ASSERT_EQ(ncclAllReduce(bufs[i].get(), bufs[i].get(), 8, ncclInt32, ncclSum, comms[i], streams[i]), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  const auto n = static_cast<std::int32_t>(comms.size());
  for (std::size_t i = 0; i < comms.size(); ++i) {
    testing::sync(streams[i]);
    EXPECT_EQ(reinterpret_cast<std::int32_t*>(bufs[i].get())[7], n * (n + 1) / 2);
    simgpu::destroyStream(streams[i]);
  }
}

TEST_F(Comms, InitAllWithADeviceList) {
  const int devlist[] = {3, 1, 2, 0};
  ncclComm_t comms[4];
  ASSERT_EQ(ncclCommInitAll(comms, 4, devlist), ncclSuccess);
  for (int i = 0; i < 4; ++i) {
    int device = -1, rank = -1, count = -1;
    ASSERT_EQ(ncclCommCuDevice(comms[i], &device), ncclSuccess);
    ASSERT_EQ(ncclCommUserRank(comms[i], &rank), ncclSuccess);
    ASSERT_EQ(ncclCommCount(comms[i], &count), ncclSuccess);
    EXPECT_EQ(device, devlist[i]);
    EXPECT_EQ(rank, i);
    EXPECT_EQ(count, 4);
  }
  expectAllReduceWorks({comms[0], comms[1], comms[2], comms[3]}, {3, 1, 2, 0});
  for (ncclComm_t c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
}

TEST_F(Comms, InitAllRefusesBadDevices) {
  ncclComm_t comms[4];
  EXPECT_EQ(ncclCommInitAll(comms, 0, nullptr), ncclInvalidArgument);
  const int missing[] = {0, 9};
  EXPECT_EQ(ncclCommInitAll(comms, 2, missing), ncclInvalidArgument);
  EXPECT_NE(lastError().find("device 9 does not exist"), std::string::npos) << lastError();
  const int twice[] = {1, 1};
  EXPECT_EQ(ncclCommInitAll(comms, 2, twice), ncclInvalidUsage);
}

TEST_F(Comms, InitRankForSeveralDevicesFromOneThreadInAGroup) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(3);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < 3; ++d) {
    ASSERT_EQ(simgpu::setCurrentDevice(d), cudaSuccess);
    ASSERT_EQ(ncclCommInitRank(&comms[d], 3, id, d), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  simgpu::setCurrentDevice(0);
  expectAllReduceWorks(comms, {0, 1, 2});
  for (ncclComm_t c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
}

TEST_F(Comms, InitRankRefusesBadArguments) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRank(nullptr, 2, id, 0), ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitRank(&comm, 0, id, 0), ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitRank(&comm, 2, id, 2), ncclInvalidArgument);
  ncclUniqueId zero{};
  EXPECT_EQ(ncclCommInitRank(&comm, 2, zero, 0), ncclInvalidArgument);
  EXPECT_NE(lastError().find("not made by ncclGetUniqueId"), std::string::npos) << lastError();
  ncclConfig_t config{};  // not from NCCL_CONFIG_INITIALIZER
  EXPECT_EQ(ncclCommInitRankConfig(&comm, 2, id, 0, &config), ncclInvalidArgument);
  ncclConfig_t blocking = NCCL_CONFIG_INITIALIZER;
  blocking.blocking = 3;
  EXPECT_EQ(ncclCommInitRankConfig(&comm, 2, id, 0, &blocking), ncclInvalidArgument);
  EXPECT_EQ(comm, nullptr);
}

TEST_F(Comms, NonBlockingInitReportsProgressThenSuccess) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.commName = "non-blocking";
  std::vector<ncclComm_t> comms(2);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < 2; ++d) {
    simgpu::setCurrentDevice(d);
    ASSERT_EQ(ncclCommInitRankConfig(&comms[d], 2, id, d, &config), ncclSuccess);
  }
  EXPECT_EQ(ncclGroupEnd(), ncclInProgress);
  simgpu::setCurrentDevice(0);
  for (ncclComm_t c : comms) {
    ncclResult_t state = ncclInProgress;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (state == ncclInProgress && std::chrono::steady_clock::now() < deadline) {
      ASSERT_EQ(ncclCommGetAsyncError(c, &state), ncclSuccess);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(state, ncclSuccess);
  }
  expectAllReduceWorks(comms, {0, 1});
  for (ncclComm_t c : comms) EXPECT_EQ(ncclCommFinalize(c), ncclInProgress);
  for (ncclComm_t c : comms) {
    ncclResult_t state = ncclInProgress;
    while (state == ncclInProgress) ASSERT_EQ(ncclCommGetAsyncError(c, &state), ncclSuccess);
    EXPECT_EQ(state, ncclSuccess);
    EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  }
}

class Split : public FourDevices {};

// Records the operations simgpu's core completes.
struct Observed {
  std::mutex mu;
  std::vector<simgpu::CompletedOp> ops;
};

void observe(const simgpu::CompletedOp& op, void* data) {
  auto* o = static_cast<Observed*>(data);
  std::lock_guard lock(o->mu);
  o->ops.push_back(op);
}



TEST_F(Split, ColorsAndKeysMakeNewCommunicators) {
  std::array<ncclComm_t, 4> children{};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) {
    // Ranks 0 and 2 form color 0, rank 1 color 1 alone, rank 3 takes no part; keys reverse
    // the order within a color.
    const int color = d == 3 ? NCCL_SPLIT_NOCOLOR : d % 2;
    ASSERT_EQ(ncclCommSplit(comms[d], color, -d, &children[d], nullptr), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(children[3], nullptr);
  auto rankOf = [](ncclComm_t c) {
    int r = -1;
    EXPECT_EQ(ncclCommUserRank(c, &r), ncclSuccess);
    return r;
  };
  auto countOf = [](ncclComm_t c) {
    int n = -1;
    EXPECT_EQ(ncclCommCount(c, &n), ncclSuccess);
    return n;
  };
  EXPECT_EQ(rankOf(children[0]), 1);
  EXPECT_EQ(rankOf(children[2]), 0);
  EXPECT_EQ(countOf(children[0]), 2);
  EXPECT_EQ(rankOf(children[1]), 0);
  EXPECT_EQ(countOf(children[1]), 1);
  expectAllReduceWorks({children[2], children[0]}, {2, 0});
  expectAllReduceWorks({children[1]}, {1});
  for (int d = 0; d < 3; ++d) EXPECT_EQ(ncclCommDestroy(children[d]), ncclSuccess);
  // The parent still works.
  expectAllReduceWorks({comms[0], comms[1], comms[2], comms[3]}, {0, 1, 2, 3});
}

TEST_F(Split, ShrinkDropsRanks) {
  std::array<ncclComm_t, 4> children{};
  int excluded[] = {1};
  ASSERT_EQ(ncclCommShrink(comms[1], excluded, 1, &children[1], nullptr, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d : {0, 2, 3}) ASSERT_EQ(ncclCommShrink(comms[d], excluded, 1, &children[d], nullptr, NCCL_SHRINK_DEFAULT), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  int rank = -1;
  ASSERT_EQ(ncclCommUserRank(children[3], &rank), ncclSuccess);
  EXPECT_EQ(rank, 2);
  expectAllReduceWorks({children[0], children[2], children[3]}, {0, 2, 3});
  for (int d : {0, 2, 3}) EXPECT_EQ(ncclCommDestroy(children[d]), ncclSuccess);
}

TEST_F(Split, FinalizeWaitsForIssuedWork) {
  std::vector<DeviceBuffer> bufs;
  for (int d = 0; d < kDevices; ++d) bufs.emplace_back(d, 1 << 20);
  Observed observed;
  simgpu::setOpObserver(observe, &observed);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) {
    ASSERT_EQ(ncclAllReduce(bufs[d].get(), bufs[d].get(), 1 << 18, ncclFloat32, ncclSum, comms[d], streams[d]), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  std::vector<std::thread> finalizers;
  std::array<ncclResult_t, kDevices> results{};
  std::array<simgpu::TimeNs, kDevices> returned{};
  for (int d = 0; d < kDevices; ++d) {
    finalizers.emplace_back([&, d] {
      results[d] = ncclCommFinalize(comms[d]);
      returned[d] = simgpu::nowNs();
    });
  }
  for (auto& t : finalizers) t.join();
  syncAll();
  simgpu::setOpObserver(nullptr, nullptr);
  ASSERT_EQ(observed.ops.size(), 4u);
  for (int d = 0; d < kDevices; ++d) {
    EXPECT_EQ(results[d], ncclSuccess);
    // Finalize returned after the modelled end of the all-reduce on its device.
    for (const auto& op : observed.ops) {
      if (op.device == d) {
        EXPECT_GE(returned[d], op.end_ns);
      }
    }
  }
}

TEST_F(Comms, MemoryHelpersAndRegistration) {
  void* p = nullptr;
  ASSERT_EQ(ncclMemAlloc(&p, 1 << 20), ncclSuccess);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(simgpu::lookupPointer(p).kind, simgpu::MemoryKind::Device);
  EXPECT_EQ(ncclMemAlloc(nullptr, 16), ncclUnhandledCudaError);
  ncclComm_t comms[1];
  ASSERT_EQ(ncclCommInitAll(comms, 1, nullptr), ncclSuccess);
  void* whole = nullptr;
  void* part = nullptr;
  ASSERT_EQ(ncclCommRegister(comms[0], p, 1 << 20, &whole), ncclSuccess);
  ASSERT_NE(whole, nullptr);
  ASSERT_EQ(ncclCommRegister(comms[0], static_cast<char*>(p) + 4096, 4096, &part), ncclSuccess);
  EXPECT_EQ(part, whole);  // inside a registered range: the same registration, one more reference
  EXPECT_EQ(ncclCommDeregister(comms[0], part), ncclSuccess);
  EXPECT_EQ(ncclCommDeregister(comms[0], whole), ncclSuccess);
  EXPECT_EQ(ncclCommDeregister(comms[0], whole), ncclInvalidUsage);
  EXPECT_EQ(ncclCommDeregister(comms[0], nullptr), ncclSuccess);
  std::vector<char> host(64);
  void* host_handle = &host;
  EXPECT_EQ(ncclCommRegister(comms[0], host.data(), host.size(), &host_handle), ncclSuccess);
  EXPECT_EQ(host_handle, nullptr);  // host memory is not registered
  EXPECT_EQ(ncclMemFree(p), ncclSuccess);
  EXPECT_EQ(ncclMemFree(nullptr), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(comms[0]), ncclSuccess);
}

TEST_F(Comms, VersionAndErrorStrings) {
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, NCCL_VERSION_CODE);
  EXPECT_STREQ(ncclGetErrorString(ncclSuccess), "no error");
  EXPECT_STREQ(ncclGetErrorString(ncclRemoteError), "remote process exited or there was a network error");
  EXPECT_STREQ(ncclGetErrorString(static_cast<ncclResult_t>(42)), "unknown result code");
}

// ncclTeam_t and the host team functions of nccl_device/core.h (a CUDA-only header).
struct Team {
  int nRanks, rank, stride;
};
extern "C" Team ncclTeamWorld(ncclComm_t);
extern "C" Team ncclTeamLsa(ncclComm_t);
extern "C" Team ncclTeamRail(ncclComm_t);
extern "C" int ncclTeamRankToWorld(ncclComm_t, Team, int);

TEST_F(Split, TeamsFollowTheEmulatedHosts) {
  // The test profile puts 2 ranks on each emulated host.
  for (int d = 0; d < kDevices; ++d) {
    const Team world = ncclTeamWorld(comms[d]);
    EXPECT_EQ(world.nRanks, 4);
    EXPECT_EQ(world.rank, d);
    const Team lsa = ncclTeamLsa(comms[d]);
    EXPECT_EQ(lsa.nRanks, 2);
    EXPECT_EQ(lsa.rank, d % 2);
    const Team rail = ncclTeamRail(comms[d]);
    EXPECT_EQ(rail.nRanks, 2);
    EXPECT_EQ(rail.rank, d / 2);
    EXPECT_EQ(rail.stride, 2);
    EXPECT_EQ(ncclTeamRankToWorld(comms[d], rail, 1 - d / 2), d % 2 + 2 * (1 - d / 2));
  }
}

// What simgpu's core (and so the CUPTI layer and the collector) sees of an all-reduce: one
// communication operation per rank, named like NCCL's kernel, starting when the last rank
// arrived and lasting exactly what the cost model says.
TEST_F(Split, StreamOperationsFollowTheCostModel) {
  constexpr std::size_t kCount = 1 << 16;
  std::vector<DeviceBuffer> bufs;
  for (int d = 0; d < kDevices; ++d) bufs.emplace_back(d, kCount * 4);
  Observed observed;
  simgpu::setOpObserver(observe, &observed);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) {
    ASSERT_EQ(ncclAllReduce(bufs[d].get(), bufs[d].get(), kCount, ncclFloat32, ncclSum, comms[d], streams[d]), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  syncAll();
  simgpu::setOpObserver(nullptr, nullptr);
  ASSERT_EQ(observed.ops.size(), 4u);
  CostParams cost;
  cost.links.inter_host = {10000, 1e10};
  std::vector<RankPlace> places;
  for (int d = 0; d < kDevices; ++d) places.push_back(RankPlace{0, d / 2});
  const std::int64_t duration = collectiveDurationNs(cost, CollKind::AllReduce, kCount * 4, places);
  for (const auto& op : observed.ops) {
    EXPECT_EQ(op.name, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    EXPECT_EQ(op.kind, simgpu::OpKind::Collective);
    EXPECT_EQ(op.work_class, simgpu::WorkClass::Communication);
    EXPECT_EQ(op.bytes, kCount * 4);
    EXPECT_EQ(op.end_ns - op.start_ns, duration);
    EXPECT_EQ(op.start_ns, observed.ops.front().start_ns);  // the last arrival, the same on every rank
  }
}

}  // namespace
}  // namespace simgpu::nccl
