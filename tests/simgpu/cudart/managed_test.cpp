// Managed memory: one pointer for the host and the device, not counted against the device's
// memory; prefetches as ops of their stream that take the time of moving their range; stream
// attachment and advice checked as CUDA checks them.
#include "op_recorder.hpp"

#include <simgpu/core/copies.hpp>
#include <simgpu/core/kernels.hpp>

#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <vector>

// The CPU implementation of `void add_ten(int* data, int n)`.
extern "C" void simgpu_cpu__Z7add_tenPii(void** args) {
  int* data = *static_cast<int**>(args[0]);
  const int n = *static_cast<int*>(args[1]);
  for (int i = 0; i < n; ++i) data[i] += 10;
}

namespace {

using simgpu::testing::OpRecorder;

char add_ten_stub;  // stands for the host stub nvcc would generate
constexpr int kCount = 256;
constexpr std::size_t kBytes = kCount * sizeof(int);

cudaMemLocation device(int id) { return cudaMemLocation{cudaMemLocationTypeDevice, id}; }
cudaMemLocation host() { return cudaMemLocation{cudaMemLocationTypeHost, 0}; }

class Managed : public ::testing::Test {
 protected:
  void SetUp() override {
    simgpu::registerKernel(&add_ten_stub, "_Z7add_tenPii");
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
    ASSERT_EQ(cudaMallocManaged(reinterpret_cast<void**>(&data_), kBytes), cudaSuccess);
  }
  void TearDown() override {
    EXPECT_EQ(cudaFree(data_), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
    cudaGetLastError();
  }
  cudaStream_t stream_ = nullptr;
  int* data_ = nullptr;
};

TEST_F(Managed, OnePointerServesTheHostAndTheDevice) {
  for (int i = 0; i < kCount; ++i) data_[i] = i;
  int n = kCount;
  void* args[] = {&data_, &n};
  ASSERT_EQ(cudaLaunchKernel(&add_ten_stub, dim3(1), dim3(256), args, 0, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(data_[i], i + 10) << i;

  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, data_ + 3), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeManaged);
  EXPECT_EQ(attr.device, 0);
  EXPECT_EQ(attr.hostPointer, data_ + 3);
  EXPECT_EQ(attr.devicePointer, data_ + 3);

  std::vector<int> copied(kCount);
  ASSERT_EQ(cudaMemcpy(copied.data(), data_, kBytes, cudaMemcpyDefault), cudaSuccess);
  EXPECT_EQ(copied[5], 15);
}

TEST_F(Managed, ManagedMemoryDoesNotFillTheDevice) {
  std::size_t free_before = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  void* big = nullptr;
  ASSERT_EQ(cudaMallocManaged(&big, total + 1, cudaMemAttachHost), cudaSuccess) << "managed memory may oversubscribe";
  std::size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(free_after, free_before);
  ASSERT_EQ(cudaFree(big), cudaSuccess);
  EXPECT_EQ(cudaFree(big), cudaErrorInvalidValue) << "freed twice";

  void* p = nullptr;
  EXPECT_EQ(cudaMallocManaged(&p, 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMallocManaged(&p, 16, cudaMemAttachSingle), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMallocManaged(nullptr, 16), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFreeAsync(data_, stream_), cudaErrorInvalidValue) << "managed memory is freed with cudaFree";
}

TEST_F(Managed, APrefetchIsAnOpOfItsStreamThatMovesItsRange) {
  OpRecorder recorder;
  ASSERT_EQ(cudaMemPrefetchAsync(data_, kBytes, device(0), 0, stream_), cudaSuccess);
  ASSERT_EQ(cudaMemPrefetchAsync(data_ + 64, kBytes / 2, host(), 0, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  std::vector<simgpu::testing::RecordedOp> prefetches;
  for (const auto& op : recorder.ops())
    if (op.kind == simgpu::OpKind::Prefetch) prefetches.push_back(op);
  ASSERT_EQ(prefetches.size(), 2u);
  EXPECT_EQ(prefetches[0].direction, simgpu::CopyDirection::HostToDevice);
  EXPECT_EQ(prefetches[0].bytes, kBytes);
  EXPECT_EQ(prefetches[0].duration(), simgpu::copyDuration(simgpu::CopyDirection::HostToDevice, kBytes));
  EXPECT_EQ(prefetches[1].direction, simgpu::CopyDirection::DeviceToHost);
  EXPECT_EQ(prefetches[1].bytes, kBytes / 2);
  EXPECT_EQ(prefetches[1].duration(), simgpu::copyDuration(simgpu::CopyDirection::DeviceToHost, kBytes / 2));
  EXPECT_GE(prefetches[1].start_ns, prefetches[0].end_ns) << "in stream order";
}

TEST_F(Managed, PrefetchesAreCheckedAsCuda) {
  EXPECT_EQ(cudaMemPrefetchAsync(data_, 0, device(0), 0, stream_), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemPrefetchAsync(data_, kBytes, device(0), 1, stream_), cudaErrorInvalidValue) << "flags";
  EXPECT_EQ(cudaMemPrefetchAsync(data_, kBytes + 1, device(0), 0, stream_), cudaErrorInvalidValue) << "past the end";
  EXPECT_EQ(cudaMemPrefetchAsync(data_, kBytes, device(7), 0, stream_), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaMemPrefetchAsync(data_, kBytes, cudaMemLocation{cudaMemLocationTypeInvalid, 0}, 0, stream_),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemPrefetchAsync(data_, kBytes, cudaMemLocation{cudaMemLocationTypeHostNuma, 0}, 0, stream_),
            cudaErrorNotSupported)
      << "not simulated: host NUMA nodes";
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, kBytes), cudaSuccess);
  EXPECT_EQ(cudaMemPrefetchAsync(dev, kBytes, device(0), 0, stream_), cudaErrorInvalidValue) << "not managed";
  std::vector<int> pageable(kCount);
  EXPECT_EQ(cudaMemPrefetchAsync(pageable.data(), kBytes, device(0), 0, stream_), cudaErrorInvalidValue)
      << "the device has no pageable memory access";
  int not_a_stream = 0;
  EXPECT_EQ(cudaMemPrefetchAsync(data_, kBytes, device(0), 0, reinterpret_cast<cudaStream_t>(&not_a_stream)),
            cudaErrorInvalidResourceHandle);
  ASSERT_EQ(cudaFree(dev), cudaSuccess);
}

TEST_F(Managed, AttachmentIsCheckedAsCuda) {
  EXPECT_EQ(cudaStreamAttachMemAsync(stream_, data_, 0, cudaMemAttachSingle), cudaSuccess);
  EXPECT_EQ(cudaStreamAttachMemAsync(stream_, data_, kBytes, cudaMemAttachHost), cudaSuccess);
  EXPECT_EQ(cudaStreamAttachMemAsync(nullptr, data_, 0, cudaMemAttachGlobal), cudaSuccess);
  EXPECT_EQ(cudaStreamAttachMemAsync(nullptr, data_, 0, cudaMemAttachSingle), cudaErrorInvalidValue)
      << "the legacy stream is not a single stream";
  EXPECT_EQ(cudaStreamAttachMemAsync(stream_, data_, kBytes / 2, cudaMemAttachSingle), cudaErrorInvalidValue)
      << "all of the allocation or nothing";
  EXPECT_EQ(cudaStreamAttachMemAsync(stream_, data_ + 1, 0, cudaMemAttachSingle), cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamAttachMemAsync(stream_, data_, 0, 7), cudaErrorInvalidValue);
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, kBytes), cudaSuccess);
  EXPECT_EQ(cudaStreamAttachMemAsync(stream_, dev, 0, cudaMemAttachSingle), cudaErrorInvalidValue);
  ASSERT_EQ(cudaFree(dev), cudaSuccess);
}

TEST_F(Managed, AdviceIsCheckedAsCuda) {
  EXPECT_EQ(cudaMemAdvise(data_, kBytes, cudaMemAdviseSetReadMostly, cudaMemLocation{}), cudaSuccess)
      << "the location is ignored";
  EXPECT_EQ(cudaMemAdvise(data_, kBytes, cudaMemAdviseSetPreferredLocation, device(0)), cudaSuccess);
  EXPECT_EQ(cudaMemAdvise(data_, kBytes, cudaMemAdviseSetPreferredLocation, host()), cudaSuccess);
  EXPECT_EQ(cudaMemAdvise(data_, kBytes, cudaMemAdviseSetPreferredLocation, device(9)), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaMemAdvise(data_, kBytes, cudaMemAdviseSetAccessedBy, device(0)), cudaSuccess);
  EXPECT_EQ(cudaMemAdvise(data_, kBytes, cudaMemAdviseSetAccessedBy,
                          cudaMemLocation{cudaMemLocationTypeHostNumaCurrent, 0}),
            cudaErrorInvalidValue)
      << "only a device or the host accesses";
  EXPECT_EQ(cudaMemAdvise(data_, kBytes, static_cast<cudaMemoryAdvise>(42), device(0)), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemAdvise(data_, kBytes + 4, cudaMemAdviseSetReadMostly, device(0)), cudaErrorInvalidValue);
  std::vector<int> pageable(kCount);
  EXPECT_EQ(cudaMemAdvise(pageable.data(), kBytes, cudaMemAdviseSetReadMostly, device(0)), cudaErrorInvalidValue);
}

}  // namespace
