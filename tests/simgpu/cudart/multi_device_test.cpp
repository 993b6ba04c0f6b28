// Several devices in one process (a profile with devices_per_process = 2): independent
// memory, streams and synchronisation per device, peer copies, and events across devices.
#include "op_recorder.hpp"

#include <simgpu/core/kernels.hpp>
#include <simgpu/core/profile.hpp>
#include <simgpu/core/runtime.hpp>

#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>
#include <vector>

namespace {

using simgpu::testing::Gate;
using simgpu::testing::OpRecorder;

const bool profile_set = [] {
  setenv("SIMGPU_PROFILE", SIMGPU_TWO_DEVICES_PROFILE, 1);
  return true;
}();

class MultiDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(profile_set);
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  }
};

TEST_F(MultiDevice, EachDeviceHasItsOwnMemory) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  ASSERT_EQ(count, 2);
  size_t free0 = 0, free1 = 0, total = 0;
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMemGetInfo(&free1, &total), cudaSuccess);
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 1 << 20), cudaSuccess);
  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, p), cudaSuccess);
  EXPECT_EQ(attr.device, 1);
  size_t after1 = 0;
  ASSERT_EQ(cudaMemGetInfo(&after1, &total), cudaSuccess);
  EXPECT_EQ(free1 - after1, 1u << 20);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMemGetInfo(&free0, &total), cudaSuccess);
  EXPECT_EQ(free0, total) << "device 0 is untouched";
  ASSERT_EQ(cudaFree(p), cudaSuccess);
}

TEST_F(MultiDevice, CurrentDeviceIsPerThread) {
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  std::thread other([] {
    int device = -1;
    EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
    EXPECT_EQ(device, 0);
  });
  other.join();
  int device = -1;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(device, 1);
}

TEST_F(MultiDevice, SynchronisingOneDeviceDoesNotWaitForTheOther) {
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  cudaStream_t s1 = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s1), cudaSuccess);
  Gate gate;
  ASSERT_EQ(simgpu::enqueue(s1, gate.op()), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 1024), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(p, 1, 1024, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // would hang if it waited for device 1
  EXPECT_EQ(cudaStreamQuery(s1), cudaErrorNotReady);
  gate.open();
  ASSERT_EQ(cudaStreamSynchronize(s1), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s1), cudaSuccess);
  ASSERT_EQ(cudaFree(p), cudaSuccess);
}

TEST_F(MultiDevice, PeerCopiesMoveDataAtTheIntraProcessLinkSpeed) {
  OpRecorder recorder;
  constexpr std::size_t n = 1 << 20;
  std::vector<int> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<int>(i * 3);
  int* d0 = nullptr;
  int* d1 = nullptr;
  ASSERT_EQ(cudaMalloc(&d0, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d1, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  int can = 0;
  ASSERT_EQ(cudaDeviceCanAccessPeer(&can, 0, 1), cudaSuccess);
  EXPECT_EQ(can, 1);
  ASSERT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
  EXPECT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
  ASSERT_EQ(cudaDeviceDisablePeerAccess(1), cudaSuccess);
  cudaGetLastError();

  ASSERT_EQ(cudaMemcpy(d0, host.data(), n * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpyPeer(d1, 1, d0, 0, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d0, d1, 16, cudaMemcpyDefault), cudaSuccess);  // a peer copy found by lookup
  std::vector<int> back(n);
  ASSERT_EQ(cudaMemcpy(back.data(), d1, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, host);
  const auto ops = recorder.ops();
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[1].direction, simgpu::CopyDirection::Peer);
  EXPECT_EQ(ops[2].direction, simgpu::CopyDirection::Peer);
  const simgpu::LinkSpec& link = simgpu::profile().links.intra_process;
  EXPECT_NEAR(static_cast<double>(ops[1].duration()), link.latency_ns + n * sizeof(int) / link.bandwidth * 1e9, 1.0);
  ASSERT_EQ(cudaFree(d0), cudaSuccess);
  ASSERT_EQ(cudaFree(d1), cudaSuccess);
}

TEST_F(MultiDevice, EventsOrderStreamsOfDifferentDevices) {
  OpRecorder recorder;
  cudaStream_t s0 = nullptr, s1 = nullptr;
  cudaEvent_t done0 = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s0), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&done0), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&s1), cudaSuccess);
  EXPECT_EQ(cudaEventRecord(done0, s1), cudaErrorInvalidResourceHandle) << "event and stream on different devices";
  cudaGetLastError();
  Gate gate;
  ASSERT_EQ(simgpu::enqueue(s0, gate.op("device0-work")), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(done0, s0), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(s1, done0, 0), cudaSuccess);
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 4096), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(p, 0, 4096, s1), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(s1), cudaErrorNotReady);
  gate.open();
  ASSERT_EQ(cudaStreamSynchronize(s1), cudaSuccess);
  const auto memset = recorder.byName("memset");
  EXPECT_EQ(memset.device, 1);
  EXPECT_EQ(memset.start_ns, recorder.byName("device0-work").end_ns);
  ASSERT_EQ(cudaFree(p), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s1), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s0), cudaSuccess);
  ASSERT_EQ(cudaEventDestroy(done0), cudaSuccess);
}

TEST_F(MultiDevice, KernelsMayOnlyBeLaunchedIntoStreamsOfTheCurrentDevice) {
  static char stub;  // stands for a kernel's host stub
  simgpu::registerKernel(&stub, "_Z6kernelv");
  cudaStream_t s0 = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s0), cudaSuccess);
  ASSERT_EQ(cudaLaunchKernel(&stub, dim3(1), dim3(1), nullptr, 0, s0), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  EXPECT_EQ(cudaLaunchKernel(&stub, dim3(1), dim3(1), nullptr, 0, s0), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 64), cudaSuccess);
  EXPECT_EQ(cudaMemsetAsync(p, 0, 64, s0), cudaSuccess) << "copies and memsets may use any device's stream";
  ASSERT_EQ(cudaStreamSynchronize(s0), cudaSuccess);
  ASSERT_EQ(cudaFree(p), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s0), cudaSuccess);
}

}  // namespace
