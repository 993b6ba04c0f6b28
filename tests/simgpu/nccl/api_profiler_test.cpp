// NCCL's profiler plugin interface: NCCL_PROFILER_PLUGIN names a plugin (here the test
// plugin, which records everything), and simgpu's NCCL reports each communicator rank and
// the events of its calls, with the modelled start and end of each operation.
#include "api_harness.hpp"
#include "simgpu/core/observer.hpp"
#include "syncopate/plugin_abi/nccl_profiler_v5.h"
#include "test_profiler_log.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>

namespace simgpu::nccl {
namespace {

using testing::DeviceBuffer;
using testing::ProfiledEvent;
using testing::ProfilerLog;

struct Observed {
  std::mutex mu;
  std::vector<simgpu::CompletedOp> ops;
};

void observe(const simgpu::CompletedOp& op, void* data) {
  auto* o = static_cast<Observed*>(data);
  std::lock_guard lock(o->mu);
  o->ops.push_back(op);
}

std::vector<const ProfiledEvent*> ofType(ProfilerLog* log, std::uint64_t type) {
  std::vector<const ProfiledEvent*> out;
  for (const ProfiledEvent* e : log->events) {
    if (e->type == type) out.push_back(e);
  }
  return out;
}

TEST(ProfilerPlugin, ReportsRanksCallsAndModelledOperations) {
  testing::useTestProfile();
  setenv("NCCL_PROFILER_PLUGIN", SIMGPU_NCCL_TEST_PROFILER_PLUGIN, 1);
  ncclComm_t comms[2];
  ASSERT_EQ(ncclCommInitAll(comms, 2, nullptr), ncclSuccess);
  void* plugin = dlopen(SIMGPU_NCCL_TEST_PROFILER_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(plugin, nullptr) << "simgpu did not load the plugin";
  auto* log_of = reinterpret_cast<ProfilerLog* (*)()>(dlsym(plugin, "simgpuTestProfilerLog"));
  ASSERT_NE(log_of, nullptr);
  ProfilerLog* log = log_of();

  Observed observed;
  simgpu::setOpObserver(observe, &observed);
  std::vector<DeviceBuffer> bufs;
  std::vector<cudaStream_t> streams;
  for (int d = 0; d < 2; ++d) {
    bufs.emplace_back(d, 4096);
    streams.push_back(testing::makeStream(d));
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < 2; ++d) {
    ASSERT_EQ(ncclAllReduce(bufs[d].get(), bufs[d].get(), 256, ncclBfloat16, ncclSum, comms[d], streams[d]), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  // A send/recv pair outside a group on each rank would deadlock; in a group it does not.
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclSend(bufs[0].get(), 10, ncclInt32, 1, comms[0], streams[0]), ncclSuccess);
  ASSERT_EQ(ncclRecv(bufs[1].get(), 10, ncclInt32, 0, comms[1], streams[1]), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  for (cudaStream_t s : streams) testing::sync(s);
  simgpu::setOpObserver(nullptr, nullptr);
  for (ncclComm_t c : comms) ASSERT_EQ(ncclCommDestroy(c), ncclSuccess);
  for (cudaStream_t s : streams) simgpu::destroyStream(s);

  std::lock_guard lock(log->mu);
  // Each rank was handed to the plugin once, and finalized once it was gone.
  ASSERT_EQ(log->comms.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(log->comms[r]->nranks, 2);
    EXPECT_EQ(log->comms[r]->nodes, 1);  // 2 ranks per emulated host in the test profile
    EXPECT_TRUE(log->comms[r]->finalized);
    EXPECT_EQ(log->comms[r]->comm_id, log->comms[0]->comm_id);
  }
  EXPECT_NE(log->comms[0]->rank, log->comms[1]->rank);

  // Two groups, each with its API events and one stream operation per rank.
  const auto groups = ofType(log, ncclProfileGroupApi);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0]->group_depth, 1);
  const auto coll_api = ofType(log, ncclProfileCollApi);
  ASSERT_EQ(coll_api.size(), 2u);
  for (const ProfiledEvent* e : coll_api) {
    EXPECT_EQ(e->func, "AllReduce");
    EXPECT_EQ(e->count, 256u);
    EXPECT_EQ(e->datatype, "ncclBfloat16");
    EXPECT_EQ(e->parent, groups[0]);
  }
  EXPECT_EQ(ofType(log, ncclProfileKernelLaunch).size(), 4u);
  const auto p2p_api = ofType(log, ncclProfileP2pApi);
  ASSERT_EQ(p2p_api.size(), 2u);
  EXPECT_EQ(p2p_api[0]->func, "Send");
  EXPECT_EQ(p2p_api[1]->func, "Recv");
  EXPECT_EQ(p2p_api[0]->parent, groups[1]);

  // The operations, under their API events, with a kernel channel spanning the modelled run.
  const auto colls = ofType(log, ncclProfileColl);
  ASSERT_EQ(colls.size(), 2u);
  for (const ProfiledEvent* e : colls) {
    EXPECT_TRUE(std::find(coll_api.begin(), coll_api.end(), e->parent) != coll_api.end());
    EXPECT_EQ(e->seq, 0u);
    EXPECT_EQ(e->algo, "RING");
    EXPECT_TRUE(e->stopped);
  }
  const auto p2ps = ofType(log, ncclProfileP2p);
  ASSERT_EQ(p2ps.size(), 2u);
  const auto channels = ofType(log, ncclProfileKernelCh);
  ASSERT_EQ(channels.size(), 4u);
  for (const ProfiledEvent* ch : channels) {
    const bool matches_an_op = std::any_of(observed.ops.begin(), observed.ops.end(), [&](const simgpu::CompletedOp& op) {
      return static_cast<std::uint64_t>(op.start_ns) == ch->timer_start && static_cast<std::uint64_t>(op.end_ns) == ch->timer_stop;
    });
    EXPECT_TRUE(matches_an_op) << "a kernel channel from " << ch->timer_start << " to " << ch->timer_stop
                               << " matches no operation simgpu ran";
    EXPECT_TRUE(ch->parent->type == ncclProfileColl || ch->parent->type == ncclProfileP2p);
  }
}

}  // namespace
}  // namespace simgpu::nccl
