// Two ranks held up by each other through their streams and hosts (docs/simgpu.md, "Peers that
// wait for each other"), as the runtime's agreement between ranks and a rank's collectives on
// another stream can be:
//
//   rank 0: a kernel Q on one stream and an all-reduce K on communicator A on another; its host
//           waits for Q, then calls an all-reduce G on communicator B.
//   rank 1: a kernel R, and G on B on another stream; then K on A, on a stream that waits for R.
//
// Q's end is final only once rank 0 knows that K starts after it, which depends on when rank 1
// reaches K: after R, whose end is final only once rank 1 knows that G starts after it, which
// depends on rank 0's host, which waits for Q. Each rank's next collective on a communicator
// is bounded by what its streams hold (its arrival floor), so both go on at once; without the
// floors Q's end waited for simgpu's one-second limit.
#include "api_fixture.hpp"

#include "simgpu/core/stream_op.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace simgpu::nccl {
namespace {

using testing::check;
using testing::DeviceBuffer;
using testing::makeStream;
using testing::sync;

constexpr TimeNs kMs = 1'000'000;

void busy(cudaStream_t stream, TimeNs duration_ns) {
  StreamOp op;
  op.work_class = WorkClass::Compute;
  op.name = "busy";
  op.duration_ns = duration_ns;
  check(simgpu::enqueue(stream, std::move(op)), "enqueue");
}

class PeerWait : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { testing::useTestProfile(); }
};

TEST_F(PeerWait, RanksHeldUpThroughEachOthersStreamsAndHostsGoOnWithoutTheBoundLimit) {
  std::array<ncclComm_t, 2> comm_a{}, comm_b{};
  const std::array<int, 2> devices{0, 1};
  ASSERT_EQ(ncclCommInitAll(comm_a.data(), 2, devices.data()), ncclSuccess);
  ASSERT_EQ(ncclCommInitAll(comm_b.data(), 2, devices.data()), ncclSuccess);
  constexpr std::size_t kCount = 1024;
  DeviceBuffer k0(0, kCount * sizeof(float)), k1(1, kCount * sizeof(float));
  DeviceBuffer g0(0, sizeof(float)), g1(1, sizeof(float));
  const std::uint64_t expired_before = simgpu::stats().bound_waits_expired;

  std::thread rank0([&] {
    check(simgpu::setCurrentDevice(0), "setCurrentDevice");
    cudaStream_t q_stream = makeStream(0), k_stream = makeStream(0), g_stream = makeStream(0);
    busy(q_stream, 10 * kMs);
    EXPECT_EQ(ncclAllReduce(k0.get(), k0.get(), kCount, ncclFloat, ncclSum, comm_a[0], k_stream), ncclSuccess);
    sync(q_stream);
    EXPECT_EQ(ncclAllReduce(g0.get(), g0.get(), 1, ncclFloat, ncclSum, comm_b[0], g_stream), ncclSuccess);
    sync(k_stream);
    sync(g_stream);
  });
  std::thread rank1([&] {
    check(simgpu::setCurrentDevice(1), "setCurrentDevice");
    cudaStream_t r_stream = makeStream(1), k_stream = makeStream(1), g_stream = makeStream(1);
    cudaEvent_t r_done = nullptr;
    check(simgpu::createEvent(1, 0, &r_done), "createEvent");
    busy(r_stream, 12 * kMs);
    EXPECT_EQ(ncclAllReduce(g1.get(), g1.get(), 1, ncclFloat, ncclSum, comm_b[1], g_stream), ncclSuccess);
    check(simgpu::recordEvent(r_done, r_stream), "recordEvent");
    check(simgpu::streamWaitEvent(k_stream, r_done), "streamWaitEvent");
    EXPECT_EQ(ncclAllReduce(k1.get(), k1.get(), kCount, ncclFloat, ncclSum, comm_a[1], k_stream), ncclSuccess);
    sync(k_stream);
    sync(g_stream);
    sync(r_stream);
  });
  rank0.join();
  rank1.join();

  EXPECT_EQ(simgpu::stats().bound_waits_expired - expired_before, 0u);
  for (ncclComm_t c : comm_a) ncclCommDestroy(c);
  for (ncclComm_t c : comm_b) ncclCommDestroy(c);
}

// One communicator's collectives on several streams, as PyTorch FSDP issues them: a
// reduce-scatter on the post-backward stream, which waits for the compute stream's gradients,
// then the next all-gather on the unshard stream, which waits for nothing. NCCL runs a
// communicator's kernels one after another (each launch's stream waits for the previous launch),
// so the all-gather starts after the reduce-scatter ends, and a kernel's end on the compute stream
// is final without waiting for the all-gather: it cannot start before that kernel ends. Before
// simgpu's streams knew the order, the kernel's end waited for the all-gather's timing, which
// waited for the reduce-scatter's, which waited for the kernel: the one-second bound limit at
// every such kernel (and, with many, a hang).
TEST_F(PeerWait, OneCommunicatorsCollectivesOnSeveralStreamsRunInIssueOrderWithoutTheBoundLimit) {
  std::array<ncclComm_t, 2> comms{};
  const std::array<int, 2> devices{0, 1};
  ASSERT_EQ(ncclCommInitAll(comms.data(), 2, devices.data()), ncclSuccess);
  constexpr std::size_t kCount = 1 << 20;
  const std::uint64_t expired_before = simgpu::stats().bound_waits_expired;
  std::array<TimeNs, 2> started_at{}, reduced_at{}, gathered_at{};

  const auto rank = [&](int r) {
    check(simgpu::setCurrentDevice(r), "setCurrentDevice");
    DeviceBuffer grads(r, 2 * kCount * sizeof(float)), shard(r, kCount * sizeof(float));
    DeviceBuffer params(r, 2 * kCount * sizeof(float));
    cudaStream_t compute = makeStream(r), post_backward = makeStream(r), unshard = makeStream(r);
    cudaEvent_t started = nullptr, grads_ready = nullptr, reduced = nullptr, gathered = nullptr;
    check(simgpu::createEvent(r, 0, &started), "createEvent");
    check(simgpu::createEvent(r, cudaEventDisableTiming, &grads_ready), "createEvent");
    check(simgpu::createEvent(r, 0, &reduced), "createEvent");
    check(simgpu::createEvent(r, 0, &gathered), "createEvent");
    check(simgpu::recordEvent(started, compute), "recordEvent");
    busy(compute, 10 * kMs);  // a unit's gradients
    check(simgpu::recordEvent(grads_ready, compute), "recordEvent");
    check(simgpu::streamWaitEvent(post_backward, grads_ready), "streamWaitEvent");
    EXPECT_EQ(ncclReduceScatter(grads.get(), shard.get(), kCount, ncclFloat, ncclSum, comms[r], post_backward),
              ncclSuccess);
    check(simgpu::recordEvent(reduced, post_backward), "recordEvent");
    EXPECT_EQ(ncclAllGather(shard.get(), params.get(), kCount, ncclFloat, comms[r], unshard), ncclSuccess);
    check(simgpu::recordEvent(gathered, unshard), "recordEvent");
    busy(compute, 10 * kMs);  // the next unit's gradients, beside the collectives
    check(simgpu::streamWaitEvent(compute, gathered), "streamWaitEvent");
    busy(compute, 1 * kMs);
    sync(compute);
    sync(post_backward);
    sync(unshard);
    check(simgpu::eventTimeNs(started, &started_at[static_cast<std::size_t>(r)]), "eventTimeNs");
    check(simgpu::eventTimeNs(reduced, &reduced_at[static_cast<std::size_t>(r)]), "eventTimeNs");
    check(simgpu::eventTimeNs(gathered, &gathered_at[static_cast<std::size_t>(r)]), "eventTimeNs");
  };
  std::thread rank0(rank, 0), rank1(rank, 1);
  rank0.join();
  rank1.join();

  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_GE(reduced_at[r] - started_at[r], 10 * kMs) << "rank " << r << ": the reduce-scatter waited for the gradients";
    EXPECT_GT(gathered_at[r], reduced_at[r]) << "rank " << r << ": the all-gather ran after the reduce-scatter";
  }
  EXPECT_EQ(simgpu::stats().bound_waits_expired - expired_before, 0u);
  for (ncclComm_t c : comms) ncclCommDestroy(c);
}

}  // namespace
}  // namespace simgpu::nccl
