// Memory through the CUDA runtime API: allocation, pinned and mapped host memory, pointer
// attributes, and copies and memsets in every direction with real data and modelled times.
#include "op_recorder.hpp"

#include <simgpu/core/copies.hpp>
#include <simgpu/core/profile.hpp>
#include <simgpu/core/runtime.hpp>

#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

namespace {

using simgpu::testing::kMs;
using simgpu::testing::OpRecorder;

std::vector<int> iota(std::size_t n, int start = 0) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST(Memory, MallocAccountsForDeviceMemory) {
  size_t free_before = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  EXPECT_EQ(total, simgpu::profile().device.memory_bytes);
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 1 << 20), cudaSuccess);
  ASSERT_NE(p, nullptr);
  size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(free_before - free_after, 1u << 20);
  ASSERT_EQ(cudaFree(p), cudaSuccess);
  EXPECT_EQ(cudaFree(p), cudaErrorInvalidValue) << "double free";
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
  void* huge = nullptr;
  EXPECT_EQ(cudaMalloc(&huge, total + 1), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
}

TEST(Memory, CopiesInEveryDirectionMoveTheData) {
  constexpr std::size_t n = 4096;
  const std::vector<int> source = iota(n, 7);
  int* d1 = nullptr;
  int* d2 = nullptr;
  int* pinned = nullptr;
  ASSERT_EQ(cudaMalloc(&d1, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d2, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&pinned, n * sizeof(int)), cudaSuccess);
  std::vector<int> back(n, 0), host_copy(n, 0);

  ASSERT_EQ(cudaMemcpy(d1, source.data(), n * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d2, d1, n * sizeof(int), cudaMemcpyDeviceToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(pinned, d2, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(std::vector<int>(pinned, pinned + n), source);
  ASSERT_EQ(cudaMemcpy(host_copy.data(), pinned, n * sizeof(int), cudaMemcpyHostToHost), cudaSuccess);
  EXPECT_EQ(host_copy, source);

  // cudaMemcpyDefault finds the direction from the pointers.
  ASSERT_EQ(cudaMemset(d1, 0, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d1, pinned, n * sizeof(int), cudaMemcpyDefault), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), d1, n * sizeof(int), cudaMemcpyDefault), cudaSuccess);
  EXPECT_EQ(back, source);

  // Async copies on a stream, completed by a stream sync.
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  std::fill(back.begin(), back.end(), 0);
  ASSERT_EQ(cudaMemsetAsync(d2, 0xff, n * sizeof(int), s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(d2, d1, n / 2 * sizeof(int), cudaMemcpyDeviceToDevice, s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(pinned, d2, n * sizeof(int), cudaMemcpyDeviceToHost, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(pinned[i], i < n / 2 ? source[i] : -1) << i;
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);

  EXPECT_EQ(cudaMemcpy(d1, d2, 4, static_cast<cudaMemcpyKind>(42)), cudaErrorInvalidMemcpyDirection);
  ASSERT_EQ(cudaFree(d1), cudaSuccess);
  ASSERT_EQ(cudaFree(d2), cudaSuccess);
  ASSERT_EQ(cudaFreeHost(pinned), cudaSuccess);
  cudaGetLastError();
}

TEST(Memory, TwoDimensionalCopiesAndMemsetsHonourPitches) {
  constexpr std::size_t width = 16, height = 8, host_pitch = 20;
  std::vector<unsigned char> host(host_pitch * height);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i);
  void* dev = nullptr;
  size_t pitch = 0;
  ASSERT_EQ(cudaMallocPitch(&dev, &pitch, width, height), cudaSuccess);
  EXPECT_GE(pitch, width);
  ASSERT_EQ(cudaMemset2D(dev, pitch, 0xab, pitch, height), cudaSuccess);
  ASSERT_EQ(cudaMemcpy2D(dev, pitch, host.data(), host_pitch, width, height, cudaMemcpyHostToDevice), cudaSuccess);
  std::vector<unsigned char> back(pitch * height);
  ASSERT_EQ(cudaMemcpy(back.data(), dev, back.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  for (std::size_t r = 0; r < height; ++r)
    for (std::size_t c = 0; c < pitch; ++c)
      ASSERT_EQ(back[r * pitch + c], c < width ? host[r * host_pitch + c] : 0xab) << r << "," << c;
  EXPECT_EQ(cudaMemcpy2D(dev, 4, host.data(), host_pitch, width, height, cudaMemcpyHostToDevice),
            cudaErrorInvalidPitchValue);
  cudaGetLastError();
  ASSERT_EQ(cudaFree(dev), cudaSuccess);
}

TEST(Memory, PinnedMappedAndRegisteredHostMemory) {
  float* mapped = nullptr;
  ASSERT_EQ(cudaHostAlloc(&mapped, 1024 * sizeof(float), cudaHostAllocMapped | cudaHostAllocPortable), cudaSuccess);
  void* device_view = nullptr;
  ASSERT_EQ(cudaHostGetDevicePointer(&device_view, mapped + 10, 0), cudaSuccess);
  EXPECT_EQ(device_view, mapped + 10) << "unified addressing maps pinned memory at the same address";
  unsigned flags = 0;
  ASSERT_EQ(cudaHostGetFlags(&flags, mapped), cudaSuccess);
  EXPECT_EQ(flags, static_cast<unsigned>(cudaHostAllocMapped | cudaHostAllocPortable));
  EXPECT_EQ(cudaHostAlloc(&mapped, 16, 0x80), cudaErrorInvalidValue);

  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, mapped + 3), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeHost);
  EXPECT_EQ(attr.devicePointer, mapped + 3);

  std::vector<double> plain(512);
  void* not_pinned = nullptr;
  EXPECT_EQ(cudaHostGetDevicePointer(&not_pinned, plain.data(), 0), cudaErrorInvalidValue);
  ASSERT_EQ(cudaPointerGetAttributes(&attr, plain.data()), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeUnregistered);

  ASSERT_EQ(cudaHostRegister(plain.data(), plain.size() * sizeof(double), cudaHostRegisterMapped), cudaSuccess);
  EXPECT_EQ(cudaHostRegister(plain.data() + 8, 64, 0), cudaErrorHostMemoryAlreadyRegistered);
  ASSERT_EQ(cudaHostGetDevicePointer(&not_pinned, plain.data(), 0), cudaSuccess);
  EXPECT_EQ(not_pinned, plain.data());
  ASSERT_EQ(cudaPointerGetAttributes(&attr, plain.data() + 100), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeHost);
  ASSERT_EQ(cudaHostUnregister(plain.data()), cudaSuccess);
  EXPECT_EQ(cudaHostUnregister(plain.data()), cudaErrorHostMemoryNotRegistered);

  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, 256), cudaSuccess);
  ASSERT_EQ(cudaPointerGetAttributes(&attr, static_cast<char*>(dev) + 100), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attr.device, 0);
  ASSERT_EQ(cudaFree(dev), cudaSuccess);
  ASSERT_EQ(cudaFreeHost(mapped), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(plain.data()), cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST(Memory, CopyDurationsFollowTheProfile) {
  OpRecorder recorder;
  const simgpu::Profile& p = simgpu::profile();
  constexpr std::size_t bytes = 25'000'000;
  void* dev = nullptr;
  void* pinned = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, bytes), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&pinned, bytes), cudaSuccess);
  const simgpu::TimeNs before = simgpu::nowNs();
  ASSERT_EQ(cudaMemcpy(dev, pinned, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  const simgpu::TimeNs h2d_wall = simgpu::nowNs() - before;
  ASSERT_EQ(cudaMemcpy(pinned, dev, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemset(dev, 1, bytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  const auto ops = recorder.ops();
  ASSERT_EQ(ops.size(), 3u);
  const double h2d = p.copy.latency_ns + bytes / p.copy.h2d_bandwidth * 1e9;
  const double d2h = p.copy.latency_ns + bytes / p.copy.d2h_bandwidth * 1e9;
  const double memset = bytes / p.device.memory_bandwidth * 1e9;
  EXPECT_EQ(ops[0].direction, simgpu::CopyDirection::HostToDevice);
  EXPECT_EQ(ops[0].bytes, bytes);
  EXPECT_NEAR(static_cast<double>(ops[0].duration()), h2d, 1.0);
  EXPECT_EQ(ops[1].direction, simgpu::CopyDirection::DeviceToHost);
  EXPECT_NEAR(static_cast<double>(ops[1].duration()), d2h, 1.0);
  EXPECT_EQ(ops[2].kind, simgpu::OpKind::Memset);
  EXPECT_NEAR(static_cast<double>(ops[2].duration()), std::max<double>(memset, p.device.min_kernel_ns), 1.0);
  // A synchronous copy returns no earlier than its modelled end.
  EXPECT_GE(static_cast<double>(h2d_wall), h2d);
  ASSERT_EQ(cudaFree(dev), cudaSuccess);
  ASSERT_EQ(cudaFreeHost(pinned), cudaSuccess);
}

TEST(Memory, HostSynchronisationFollowsCudaRules) {
  // A device-to-device cudaMemcpy and a cudaMemset of device memory return before the copy is
  // done; copies to or from host memory do not. A gate holds the legacy stream so that
  // nothing completes before the checks, whatever the machine's load.
  constexpr std::size_t bytes = 1 << 20;
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_EQ(cudaMalloc(&a, bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, bytes), cudaSuccess);
  simgpu::testing::Gate gate;
  ASSERT_EQ(simgpu::enqueue(nullptr, gate.op()), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(b, 3, bytes), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(nullptr), cudaErrorNotReady) << "cudaMemcpy D2D and cudaMemset are asynchronous";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "cudaErrorNotReady is not recorded as an error";
  gate.open();
  std::vector<char> host(16);
  ASSERT_EQ(cudaMemcpy(host.data(), b, host.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(nullptr), cudaSuccess) << "a D2H cudaMemcpy waits, and so for the prior work";
  EXPECT_EQ(host, std::vector<char>(16, 3));
  ASSERT_EQ(cudaFree(a), cudaSuccess);
  ASSERT_EQ(cudaFree(b), cudaSuccess);
}

TEST(Memory, StreamOrderedAllocation) {
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  int* p = nullptr;
  ASSERT_EQ(cudaMallocAsync(reinterpret_cast<void**>(&p), 64 * sizeof(int), s), cudaSuccess);
  const std::vector<int> values = iota(64);
  ASSERT_EQ(cudaMemcpyAsync(p, values.data(), 64 * sizeof(int), cudaMemcpyHostToDevice, s), cudaSuccess);
  std::vector<int> back(64);
  ASSERT_EQ(cudaMemcpyAsync(back.data(), p, 64 * sizeof(int), cudaMemcpyDeviceToHost, s), cudaSuccess);
  ASSERT_EQ(cudaFreeAsync(p, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_EQ(back, values);
  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, p), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeUnregistered) << "freed when the stream reached the free";
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

}  // namespace
