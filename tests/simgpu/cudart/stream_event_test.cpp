// Streams and events through the CUDA runtime API: flags and priorities, queries, host
// syncs, waits across streams, the legacy default stream, event flags and elapsed times
// that match the profile.
#include "op_recorder.hpp"

#include <simgpu/core/profile.hpp>
#include <simgpu/core/runtime.hpp>

#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace {

using simgpu::testing::Gate;
using simgpu::testing::kMs;
using simgpu::testing::OpRecorder;

TEST(Streams, FlagsPrioritiesAndIds) {
  int least = 1, greatest = 1;
  ASSERT_EQ(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
  EXPECT_EQ(least, 0);
  EXPECT_EQ(greatest, -5);
  cudaStream_t high = nullptr, low = nullptr, clamped = nullptr;
  ASSERT_EQ(cudaStreamCreateWithPriority(&high, cudaStreamNonBlocking, greatest), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithPriority(&low, cudaStreamDefault, least), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithPriority(&clamped, cudaStreamDefault, -100), cudaSuccess);
  int priority = 1;
  unsigned flags = 7;
  ASSERT_EQ(cudaStreamGetPriority(high, &priority), cudaSuccess);
  EXPECT_EQ(priority, -5);
  ASSERT_EQ(cudaStreamGetPriority(clamped, &priority), cudaSuccess);
  EXPECT_EQ(priority, -5) << "out-of-range priorities are clamped";
  ASSERT_EQ(cudaStreamGetFlags(high, &flags), cudaSuccess);
  EXPECT_EQ(flags, static_cast<unsigned>(cudaStreamNonBlocking));
  ASSERT_EQ(cudaStreamGetFlags(low, &flags), cudaSuccess);
  EXPECT_EQ(flags, static_cast<unsigned>(cudaStreamDefault));
  unsigned long long id_high = 0, id_low = 0, id_legacy = 0;
  ASSERT_EQ(cudaStreamGetId(high, &id_high), cudaSuccess);
  ASSERT_EQ(cudaStreamGetId(low, &id_low), cudaSuccess);
  ASSERT_EQ(cudaStreamGetId(nullptr, &id_legacy), cudaSuccess);
  EXPECT_NE(id_high, id_low);
  EXPECT_NE(id_legacy, id_low);
  int device = -1;
  ASSERT_EQ(cudaStreamGetDevice(low, &device), cudaSuccess);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(cudaStreamCreateWithFlags(&low, 0x10), cudaErrorInvalidValue);
  for (cudaStream_t s : {high, low, clamped}) ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(high), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamDestroy(nullptr), cudaErrorInvalidResourceHandle);
  cudaGetLastError();
}

TEST(Streams, QueryAndSynchronizeFollowTheWork) {
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);
  Gate gate;
  ASSERT_EQ(simgpu::enqueue(s, gate.op()), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady);
  std::atomic<bool> synced{false};
  std::thread waiter([&] {
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    synced = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(synced.load()) << "cudaStreamSynchronize returned before the work was done";
  gate.open();
  waiter.join();
  EXPECT_TRUE(synced.load());
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

TEST(Streams, LegacyDefaultStreamWaitsForBlockingStreamsNotNonBlockingOnes) {
  OpRecorder recorder;
  cudaStream_t blocking = nullptr, non_blocking = nullptr;
  ASSERT_EQ(cudaStreamCreate(&blocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&non_blocking, cudaStreamNonBlocking), cudaSuccess);
  Gate gate_b, gate_nb;
  ASSERT_EQ(simgpu::enqueue(blocking, gate_b.op("gate-b")), cudaSuccess);
  ASSERT_EQ(simgpu::enqueue(non_blocking, gate_nb.op("gate-nb")), cudaSuccess);
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(dev, 0, 1 << 20, nullptr), cudaSuccess);
  // The legacy-stream memset waits for the blocking stream's gate only.
  gate_b.open();
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(non_blocking), cudaErrorNotReady);
  gate_nb.open();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(recorder.byName("memset").start_ns, recorder.byName("gate-b").end_ns);
  ASSERT_EQ(cudaFree(dev), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(blocking), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(non_blocking), cudaSuccess);
}

TEST(Streams, HostFunctionsAndCallbacksRunInStreamOrder) {
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  std::vector<int> order;
  Gate gate;
  ASSERT_EQ(simgpu::enqueue(s, gate.op()), cudaSuccess);
  ASSERT_EQ(cudaLaunchHostFunc(s, [](void* p) { static_cast<std::vector<int>*>(p)->push_back(1); }, &order),
            cudaSuccess);
  ASSERT_EQ(cudaStreamAddCallback(
                s,
                [](cudaStream_t, cudaError_t status, void* p) {
                  static_cast<std::vector<int>*>(p)->push_back(status == cudaSuccess ? 2 : -2);
                },
                &order, 0),
            cudaSuccess);
  EXPECT_TRUE(order.empty());
  gate.open();
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

TEST(Events, ElapsedTimeIsTheModelledTimeBetweenRecords) {
  const simgpu::Profile& p = simgpu::profile();
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  cudaEvent_t start = nullptr, stop = nullptr;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&stop, cudaEventBlockingSync), cudaSuccess);
  constexpr std::size_t bytes = 50'000'000;
  void* dev = nullptr;
  void* pinned = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, bytes), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&pinned, bytes), cudaSuccess);
  Gate gate;
  ASSERT_EQ(simgpu::enqueue(s, gate.op()), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(start, s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(dev, pinned, bytes, cudaMemcpyHostToDevice, s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(pinned, dev, bytes, cudaMemcpyDeviceToHost, s), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(stop, s), cudaSuccess);
  float ms = 0;
  EXPECT_EQ(cudaEventQuery(stop), cudaErrorNotReady);
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaErrorNotReady);
  gate.open();
  ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(stop), cudaSuccess);
  ASSERT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
  const double expected_ms = (2.0 * p.copy.latency_ns + bytes / p.copy.h2d_bandwidth * 1e9 +
                              bytes / p.copy.d2h_bandwidth * 1e9) / 1e6;
  EXPECT_NEAR(ms, expected_ms, 1e-3);
  ASSERT_EQ(cudaEventDestroy(start), cudaSuccess);
  ASSERT_EQ(cudaEventDestroy(stop), cudaSuccess);
  ASSERT_EQ(cudaFree(dev), cudaSuccess);
  ASSERT_EQ(cudaFreeHost(pinned), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

TEST(Events, FlagsAndErrorsOfElapsedTime) {
  cudaEvent_t timed = nullptr, untimed = nullptr, never = nullptr;
  ASSERT_EQ(cudaEventCreate(&timed), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&never), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(never), cudaSuccess) << "an event never recorded is complete";
  EXPECT_EQ(cudaEventSynchronize(never), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(timed, nullptr), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(untimed, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  float ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&ms, timed, untimed), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventElapsedTime(&ms, timed, never), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventElapsedTime(nullptr, timed, timed), cudaErrorInvalidValue);
  ASSERT_EQ(cudaEventElapsedTime(&ms, timed, timed), cudaSuccess);
  EXPECT_EQ(ms, 0.0f);
  EXPECT_EQ(cudaEventCreateWithFlags(&never, 0x100), cudaErrorInvalidValue);
  EXPECT_EQ(cudaEventCreateWithFlags(&never, cudaEventInterprocess), cudaErrorInvalidValue)
      << "interprocess events must disable timing";
  for (cudaEvent_t e : {timed, untimed}) ASSERT_EQ(cudaEventDestroy(e), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(timed), cudaErrorInvalidResourceHandle);
  cudaGetLastError();
}

TEST(Events, WaitEventOrdersAnotherStream) {
  OpRecorder recorder;
  cudaStream_t producer = nullptr, consumer = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t ready = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), cudaSuccess);
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_EQ(cudaMalloc(&a, 1 << 24), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, 1 << 24), cudaSuccess);
  Gate gate;
  ASSERT_EQ(simgpu::enqueue(producer, gate.op()), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(a, 7, 1 << 24, producer), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(ready, producer), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(consumer, ready, 0), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(b, a, 1 << 24, cudaMemcpyDeviceToDevice, consumer), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(consumer), cudaErrorNotReady);
  gate.open();
  ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);
  std::vector<unsigned char> back(1 << 24);
  ASSERT_EQ(cudaMemcpy(back.data(), b, back.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, std::vector<unsigned char>(1 << 24, 7));
  EXPECT_EQ(recorder.byName("memcpy DtoD").start_ns, recorder.byName("memset").end_ns);
  ASSERT_EQ(cudaFree(a), cudaSuccess);
  ASSERT_EQ(cudaFree(b), cudaSuccess);
  ASSERT_EQ(cudaEventDestroy(ready), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(producer), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(consumer), cudaSuccess);
}

}  // namespace
