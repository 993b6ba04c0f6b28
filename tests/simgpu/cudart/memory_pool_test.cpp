// Stream-ordered allocation and memory pools: which freed blocks a stream may take again (its
// own frees before they run, anyone's once they ran; with opportunistic reuse off, once a host
// synchronisation followed), release thresholds, trimming, attributes, pools made and
// destroyed, and CUDA's errors. Experiments that change a pool's attributes use pools of their
// own: the default pool is shared by every test of the process.
#include "op_recorder.hpp"

#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

constexpr std::size_t kBlock = 1 << 20;

cudaMemPoolProps deviceProps(int device = 0, std::size_t max_size = 0) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  props.maxSize = max_size;
  return props;
}

std::uint64_t attribute(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  std::uint64_t value = 0;
  EXPECT_EQ(cudaMemPoolGetAttribute(pool, attr, &value), cudaSuccess);
  return value;
}

// Polls (without synchronising: that would release the pool's memory) until `s` is idle.
void waitIdle(cudaStream_t s) {
  while (cudaStreamQuery(s) == cudaErrorNotReady) {
  }
}

class MemoryPool : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaStreamCreate(&s_), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&t_), cudaSuccess);
    const cudaMemPoolProps props = deviceProps();
    ASSERT_EQ(cudaMemPoolCreate(&pool_, &props), cudaSuccess);
    std::uint64_t keep_everything = UINT64_MAX;
    ASSERT_EQ(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep_everything), cudaSuccess);
  }
  void TearDown() override {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemPoolDestroy(pool_), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(s_), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(t_), cudaSuccess);
    cudaGetLastError();
  }
  void* allocate(cudaStream_t s, std::size_t bytes = kBlock) {
    void* p = nullptr;
    EXPECT_EQ(cudaMallocFromPoolAsync(&p, bytes, pool_, s), cudaSuccess);
    return p;
  }
  cudaStream_t s_ = nullptr, t_ = nullptr;
  cudaMemPool_t pool_ = nullptr;
};

TEST_F(MemoryPool, TheFreeingStreamReusesABlockBeforeItsFreeRuns) {
  simgpu::testing::Gate gate;
  ASSERT_EQ(simgpu::enqueue(s_, gate.op()), cudaSuccess);
  void* p = allocate(s_);
  ASSERT_EQ(cudaFreeAsync(p, s_), cudaSuccess);
  EXPECT_EQ(allocate(s_), p) << "later work of the stream follows the free";
  void* elsewhere = allocate(t_);
  EXPECT_NE(elsewhere, p) << "another stream may not take a block whose free has not run";
  EXPECT_EQ(attribute(pool_, cudaMemPoolAttrUsedMemCurrent), 2 * kBlock);
  EXPECT_EQ(attribute(pool_, cudaMemPoolAttrReservedMemCurrent), 2 * kBlock);
  gate.open();
  ASSERT_EQ(cudaFreeAsync(p, s_), cudaSuccess);
  ASSERT_EQ(cudaFreeAsync(elsewhere, t_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s_), cudaSuccess);  // the gate outlives its op
}

TEST_F(MemoryPool, AnyStreamReusesAFreeThatRanUnlessOpportunisticReuseIsOff) {
  void* p = allocate(s_);
  ASSERT_EQ(cudaFreeAsync(p, s_), cudaSuccess);
  waitIdle(s_);
  void* q = allocate(t_);
  EXPECT_EQ(q, p) << "opportunistic reuse (on by default) of a free that ran";
  ASSERT_EQ(cudaFreeAsync(q, t_), cudaSuccess);
  waitIdle(t_);

  int off = 0;
  ASSERT_EQ(cudaMemPoolSetAttribute(pool_, cudaMemPoolReuseAllowOpportunistic, &off), cudaSuccess);
  int flag = 1;
  ASSERT_EQ(cudaMemPoolGetAttribute(pool_, cudaMemPoolReuseAllowOpportunistic, &flag), cudaSuccess);
  EXPECT_EQ(flag, 0);
  void* r = allocate(s_);
  EXPECT_NE(r, p) << "without opportunistic reuse a free is reused only after a host synchronisation";
  ASSERT_EQ(cudaFreeAsync(r, s_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s_), cudaSuccess);
  void* u = allocate(t_);
  EXPECT_TRUE(u == p || u == r) << "after the synchronisation, either cached block";
  ASSERT_EQ(cudaFreeAsync(u, t_), cudaSuccess);
}

TEST_F(MemoryPool, TheReleaseThresholdDecidesWhatASynchronisationGivesBack) {
  std::size_t free_before = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  void* p = allocate(s_);
  ASSERT_EQ(cudaFreeAsync(p, s_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s_), cudaSuccess);
  std::size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(free_before - free_after, kBlock) << "a pool keeps what it reserved below its threshold";
  EXPECT_EQ(attribute(pool_, cudaMemPoolAttrReservedMemCurrent), kBlock);
  EXPECT_EQ(attribute(pool_, cudaMemPoolAttrUsedMemCurrent), 0u);
  EXPECT_EQ(attribute(pool_, cudaMemPoolAttrUsedMemHigh), kBlock);

  ASSERT_EQ(cudaMemPoolTrimTo(pool_, kBlock), cudaSuccess);
  EXPECT_EQ(attribute(pool_, cudaMemPoolAttrReservedMemCurrent), kBlock) << "trimming keeps at least what it is told";
  ASSERT_EQ(cudaMemPoolTrimTo(pool_, 0), cudaSuccess);
  EXPECT_EQ(attribute(pool_, cudaMemPoolAttrReservedMemCurrent), 0u);
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(free_after, free_before);

  std::uint64_t zero = 0;
  ASSERT_EQ(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &zero), cudaSuccess);
  p = allocate(s_);
  ASSERT_EQ(cudaFreeAsync(p, s_), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(attribute(pool_, cudaMemPoolAttrReservedMemCurrent), 0u) << "threshold 0: all of it goes back";
  EXPECT_EQ(attribute(pool_, cudaMemPoolAttrReservedMemHigh), kBlock);

  // The high watermarks may be reset, never set; the current counts are read-only.
  EXPECT_EQ(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReservedMemHigh, &zero), cudaSuccess);
  EXPECT_EQ(attribute(pool_, cudaMemPoolAttrReservedMemHigh), 0u);
  std::uint64_t one = 1;
  EXPECT_EQ(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &one), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &zero), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, nullptr), cudaErrorInvalidValue);
}

TEST_F(MemoryPool, APoolsMaximumSizeBoundsItsReservation) {
  const cudaMemPoolProps props = deviceProps(0, 2 * kBlock);
  cudaMemPool_t small = nullptr;
  ASSERT_EQ(cudaMemPoolCreate(&small, &props), cudaSuccess);
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_EQ(cudaMallocFromPoolAsync(&a, 2 * kBlock, small, s_), cudaSuccess);
  EXPECT_EQ(cudaMallocFromPoolAsync(&b, 1, small, s_), cudaErrorMemoryAllocation);
  EXPECT_EQ(b, nullptr);
  ASSERT_EQ(cudaFreeAsync(a, s_), cudaSuccess);
  waitIdle(s_);
  ASSERT_EQ(cudaMallocFromPoolAsync(&b, kBlock, small, t_), cudaSuccess) << "the cached block fits";
  EXPECT_EQ(b, a);
  ASSERT_EQ(cudaFreeAsync(b, t_), cudaSuccess);
  ASSERT_EQ(cudaMemPoolDestroy(small), cudaSuccess);
}

TEST_F(MemoryPool, CudaMallocAsyncTakesTheDevicesCurrentPool) {
  cudaMemPool_t default_pool = nullptr, current = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&default_pool, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetMemPool(&current, 0), cudaSuccess);
  EXPECT_EQ(current, default_pool);
  ASSERT_EQ(cudaDeviceSetMemPool(0, pool_), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetMemPool(&current, 0), cudaSuccess);
  EXPECT_EQ(current, pool_);
  void* p = nullptr;
  ASSERT_EQ(cudaMallocAsync(&p, kBlock, s_), cudaSuccess);
  EXPECT_EQ(attribute(pool_, cudaMemPoolAttrUsedMemCurrent), kBlock);
  ASSERT_EQ(cudaFreeAsync(p, s_), cudaSuccess);

  // Destroying the current pool makes the default pool current again.
  const cudaMemPoolProps props = deviceProps();
  cudaMemPool_t other = nullptr;
  ASSERT_EQ(cudaMemPoolCreate(&other, &props), cudaSuccess);
  ASSERT_EQ(cudaDeviceSetMemPool(0, other), cudaSuccess);
  ASSERT_EQ(cudaMemPoolDestroy(other), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetMemPool(&current, 0), cudaSuccess);
  EXPECT_EQ(current, default_pool);
  EXPECT_EQ(cudaMemPoolDestroy(other), cudaErrorInvalidValue) << "already destroyed";
  EXPECT_EQ(cudaDeviceSetMemPool(0, other), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemPoolDestroy(default_pool), cudaErrorInvalidValue) << "a default pool stays";
  EXPECT_EQ(cudaDeviceSetMemPool(3, default_pool), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaDeviceGetDefaultMemPool(&current, 3), cudaErrorInvalidDevice);
}

TEST_F(MemoryPool, BlocksFreedWithCudaFreeGoBackToTheirPool) {
  void* p = allocate(s_);
  ASSERT_EQ(cudaFree(p), cudaSuccess);
  EXPECT_EQ(attribute(pool_, cudaMemPoolAttrUsedMemCurrent), 0u);
  EXPECT_EQ(attribute(pool_, cudaMemPoolAttrReservedMemCurrent), kBlock);
  EXPECT_EQ(cudaFree(p), cudaErrorInvalidValue) << "freed twice";
  EXPECT_EQ(cudaFreeAsync(p, s_), cudaErrorInvalidValue) << "freed twice";
  void* q = allocate(s_);
  EXPECT_EQ(cudaFreeAsync(static_cast<char*>(q) + 8, s_), cudaErrorInvalidValue) << "not a block's start";
  int not_a_stream = 0;
  EXPECT_EQ(cudaFreeAsync(q, reinterpret_cast<cudaStream_t>(&not_a_stream)), cudaErrorInvalidResourceHandle);
  ASSERT_EQ(cudaFreeAsync(q, s_), cudaSuccess);
  EXPECT_EQ(cudaFreeAsync(nullptr, s_), cudaSuccess);
}

TEST_F(MemoryPool, PoolCreationChecksItsPropertiesAsCuda) {
  cudaMemPool_t pool = nullptr;
  cudaMemPoolProps props = deviceProps(5);
  EXPECT_EQ(cudaMemPoolCreate(&pool, &props), cudaErrorInvalidValue) << "no such device";
  props = deviceProps();
  props.allocType = cudaMemAllocationTypeInvalid;
  EXPECT_EQ(cudaMemPoolCreate(&pool, &props), cudaErrorInvalidValue);
  props = deviceProps();
  props.reserved[3] = 1;
  EXPECT_EQ(cudaMemPoolCreate(&pool, &props), cudaErrorInvalidValue) << "reserved bytes must be zero";
  props = deviceProps();
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  EXPECT_EQ(cudaMemPoolCreate(&pool, &props), cudaErrorNotSupported) << "not simulated: pools shared by processes";
  props = deviceProps();
  props.location.type = cudaMemLocationTypeHost;
  EXPECT_EQ(cudaMemPoolCreate(&pool, &props), cudaErrorNotSupported) << "not simulated: pools of host memory";
  EXPECT_EQ(cudaMemPoolCreate(&pool, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemPoolTrimTo(reinterpret_cast<cudaMemPool_t>(&props), 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

TEST_F(MemoryPool, AllocatingDuringCaptureIsNotSimulated) {
  ASSERT_EQ(cudaStreamBeginCapture(s_, cudaStreamCaptureModeGlobal), cudaSuccess);
  void* p = nullptr;
  EXPECT_EQ(cudaMallocAsync(&p, kBlock, s_), cudaErrorStreamCaptureUnsupported);
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(s_, &graph), cudaErrorStreamCaptureInvalidated);
}

}  // namespace
