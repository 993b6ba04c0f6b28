// NCCL's tuner plugin and channel settings: NCCL_TUNER_PLUGIN names the test plugin, which
// records what it is given and chooses SIMGPU_TEST_TUNER_CHANNELS channels; the count a
// collective runs on shows in the profiler plugin's Coll event and in its modelled duration
// (profiles/four_devices_channels.json: two hosts of two devices, 10 GB/s between them, 2.5 GB/s
// a channel, so that 4 channels saturate the link). The plugins and NCCL_MIN/MAX_CTAS are read
// once per process: ctest runs each test in a process of its own.
#include "api_harness.hpp"
#include "simgpu/core/observer.hpp"
#include "syncopate/plugin_abi/nccl_profiler_v5.h"
#include "test_profiler_log.hpp"
#include "test_tuner_log.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace simgpu::nccl {
namespace {

using testing::DeviceBuffer;
using testing::ProfiledEvent;
using testing::ProfilerLog;
using testing::TunerLog;

constexpr int kRanks = 4;
constexpr std::size_t kCount = 1 << 20;  // floats: 4 MiB a rank
constexpr std::int64_t kRingLatencyNs = 6 * 10000;  // 2(n-1) hops between hosts

struct Observed {
  std::mutex mu;
  std::vector<simgpu::CompletedOp> ops;
};

void observe(const simgpu::CompletedOp& op, void* data) {
  auto* o = static_cast<Observed*>(data);
  std::lock_guard lock(o->mu);
  if (op.kind == simgpu::OpKind::Collective) o->ops.push_back(op);
}

template <typename T>
T* pluginSymbol(const char* library, const char* name) {
  void* plugin = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  return plugin != nullptr ? reinterpret_cast<T*>(dlsym(plugin, name)) : nullptr;
}

// Four ranks in one process, each with a buffer and a stream.
class Ranks {
 public:
  Ranks() {
    testing::useTestProfile();
    if (ncclCommInitAll(comms_, kRanks, nullptr) != ncclSuccess) throw std::runtime_error("ncclCommInitAll failed");
    for (int d = 0; d < kRanks; ++d) {
      bufs_.emplace_back(d, kCount * sizeof(float) * kRanks);
      streams_.push_back(testing::makeStream(d));
    }
    simgpu::setOpObserver(observe, &observed_);
  }
  ~Ranks() {
    simgpu::setOpObserver(nullptr, nullptr);
    for (ncclComm_t c : comms_) ncclCommDestroy(c);
    for (cudaStream_t s : streams_) simgpu::destroyStream(s);
  }
  // One all-reduce of kCount floats on every rank; the modelled durations of its operations.
  std::vector<std::int64_t> allReduce() {
    ncclGroupStart();
    for (int d = 0; d < kRanks; ++d) ncclAllReduce(bufs_[d].get(), bufs_[d].get(), kCount, ncclFloat32, ncclSum, comms_[d], streams_[d]);
    ncclGroupEnd();
    return durations();
  }
  std::vector<std::int64_t> allGather() {
    ncclGroupStart();
    for (int d = 0; d < kRanks; ++d) {
      auto* base = static_cast<float*>(bufs_[d].get());
      ncclAllGather(base + kCount * d, base, kCount, ncclFloat32, comms_[d], streams_[d]);
    }
    ncclGroupEnd();
    return durations();
  }

 private:
  std::vector<std::int64_t> durations() {
    for (cudaStream_t s : streams_) testing::sync(s);
    std::lock_guard lock(observed_.mu);
    std::vector<std::int64_t> out;
    for (const simgpu::CompletedOp& op : observed_.ops) out.push_back(op.end_ns - op.start_ns);
    observed_.ops.clear();
    return out;
  }
  ncclComm_t comms_[kRanks]{};
  std::vector<DeviceBuffer> bufs_;
  std::vector<cudaStream_t> streams_;
  Observed observed_;
};

// The ring all-reduce of kCount floats over the hosts' link at `bandwidth` (cost_model.hpp).
std::int64_t allReduceNs(double bandwidth) {
  return kRingLatencyNs + std::llround(2.0 * 3 / 4 * kCount * sizeof(float) / bandwidth * 1e9);
}

std::vector<int> collChannels() {
  auto* log_of = pluginSymbol<ProfilerLog*()>(SIMGPU_NCCL_TEST_PROFILER_PLUGIN, "simgpuTestProfilerLog");
  EXPECT_NE(log_of, nullptr);
  if (log_of == nullptr) return {};
  ProfilerLog* log = log_of();
  std::lock_guard lock(log->mu);
  std::vector<int> out;
  for (const ProfiledEvent* e : log->events)
    if (e->type == ncclProfileColl) out.push_back(e->channels);
  return out;
}

TEST(TunerPlugin, IsGivenTheCommunicatorAndEachCollectiveAndChoosesItsChannels) {
  setenv("NCCL_TUNER_PLUGIN", SIMGPU_NCCL_TEST_TUNER_PLUGIN, 1);
  setenv("NCCL_PROFILER_PLUGIN", SIMGPU_NCCL_TEST_PROFILER_PLUGIN, 1);
  setenv("SIMGPU_TEST_TUNER_CHANNELS", "2", 1);
  std::vector<std::int64_t> on2, on4, on8, gathered;
  {
    Ranks ranks;
    on2 = ranks.allReduce();
    setenv("SIMGPU_TEST_TUNER_CHANNELS", "4", 1);
    on4 = ranks.allReduce();
    setenv("SIMGPU_TEST_TUNER_CHANNELS", "8", 1);
    on8 = ranks.allReduce();
    setenv("SIMGPU_TEST_TUNER_CHANNELS", "0", 1);  // leaves the choice: the default, 16
    gathered = ranks.allGather();
  }
  // Below saturation the channels set the pace; at and above it the link does.
  EXPECT_EQ(on2, std::vector<std::int64_t>(kRanks, allReduceNs(2 * 2.5e9)));
  EXPECT_EQ(on4, std::vector<std::int64_t>(kRanks, allReduceNs(1e10)));
  EXPECT_EQ(on8, on4);
  EXPECT_EQ(gathered.size(), static_cast<std::size_t>(kRanks));
  std::vector<int> expected_channels;
  for (int c : {2, 4, 8, 16}) expected_channels.insert(expected_channels.end(), kRanks, c);
  EXPECT_EQ(collChannels(), expected_channels);

  auto* log_of = pluginSymbol<TunerLog*()>(SIMGPU_NCCL_TEST_TUNER_PLUGIN, "simgpuTestTunerLog");
  ASSERT_NE(log_of, nullptr) << "simgpu did not load the tuner plugin";
  TunerLog* log = log_of();
  std::lock_guard lock(log->mu);
  ASSERT_EQ(log->comms.size(), static_cast<std::size_t>(kRanks));
  for (const auto* comm : log->comms) {
    EXPECT_EQ(comm->comm_id, log->comms[0]->comm_id);
    EXPECT_EQ(comm->nranks, 4u);
    EXPECT_EQ(comm->nnodes, 2u);
    EXPECT_EQ(comm->domains.nNvlDomains, 2);
    EXPECT_EQ(comm->domains.maxRanksPerNvlDomain, 2);
    EXPECT_DOUBLE_EQ(comm->constants.perChMaxRingLL128Bws[NCCL_HOPPER_COMPCAP_IDX][NCCL_TUNING_SCALE_2NODES], 2.5);
    EXPECT_DOUBLE_EQ(comm->constants.perChMaxTreeBws[NCCL_HOPPER_COMPCAP_IDX][NCCL_TUNING_SCALE_2NODES], 2.5);
    EXPECT_DOUBLE_EQ(comm->constants.llMaxBws[NCCL_HOPPER_COMPCAP_IDX][NCCL_TUNING_SCALE_2NODES], 10.0);
    EXPECT_DOUBLE_EQ(comm->constants.hwLatencies[NCCL_HW_NET][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 10.0);
    EXPECT_TRUE(comm->finalized);
  }
  ASSERT_EQ(log->calls.size(), static_cast<std::size_t>(4 * kRanks));
  for (std::size_t i = 0; i < log->calls.size(); ++i) {
    const auto& call = log->calls[i];
    const bool gather = i >= 3 * kRanks;
    EXPECT_EQ(call.func, gather ? ncclFuncAllGather : ncclFuncAllReduce);
    // NCCL's nBytes: an all-gather's is every rank's part together.
    EXPECT_EQ(call.bytes, kCount * sizeof(float) * (gather ? kRanks : 1));
    EXPECT_EQ(call.num_pipe_ops, 1);
    EXPECT_EQ(call.num_algo, NCCL_NUM_ALGORITHMS);
    EXPECT_EQ(call.num_proto, NCCL_NUM_PROTOCOLS);
    EXPECT_EQ(call.channels_in, 0);
    EXPECT_FLOAT_EQ(call.ring_ll_us, static_cast<float>(NCCL_ALGO_PROTO_IGNORE));
    if (!gather) {
      EXPECT_FLOAT_EQ(call.ring_simple_us, static_cast<float>(allReduceNs(1e10) / 1e3));  // on the default 16
    }
  }
}

TEST(Channels, NcclMaxCtasBoundsTheDefault) {
  setenv("NCCL_MAX_CTAS", "2", 1);
  setenv("NCCL_TUNER_PLUGIN", "none", 1);
  setenv("NCCL_PROFILER_PLUGIN", SIMGPU_NCCL_TEST_PROFILER_PLUGIN, 1);
  Ranks ranks;
  EXPECT_EQ(ranks.allReduce(), std::vector<std::int64_t>(kRanks, allReduceNs(2 * 2.5e9)));
  EXPECT_EQ(collChannels(), std::vector<int>(kRanks, 2));
}

TEST(TunerPlugin, ALibraryWithoutTheSymbolIsSaidAndTheRunGoesOn) {
  setenv("NCCL_TUNER_PLUGIN", SIMGPU_NCCL_TEST_PROFILER_PLUGIN, 1);  // a plugin, but not a tuner
  ::testing::internal::CaptureStderr();
  std::vector<std::int64_t> durations;
  {
    Ranks ranks;
    durations = ranks.allReduce();
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("has no complete ncclTunerPlugin_v5"), std::string::npos) << err;
  EXPECT_EQ(durations, std::vector<std::int64_t>(kRanks, allReduceNs(1e10)));  // the default 16 saturate
}

}  // namespace
}  // namespace simgpu::nccl
