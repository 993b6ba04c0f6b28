// Device limits: CUDA's defaults, what may be set and how the hints are clamped, the limit a
// device of compute capability 9.0 no longer has, and the defaults back after a reset.
#include <cuda_runtime.h>

#include <gtest/gtest.h>

namespace {

size_t limit(cudaLimit which) {
  size_t value = 0;
  EXPECT_EQ(cudaDeviceGetLimit(&value, which), cudaSuccess);
  return value;
}

TEST(Limits, SetGetClampAndResetAsCuda) {
  EXPECT_EQ(limit(cudaLimitStackSize), 1024u);
  EXPECT_EQ(limit(cudaLimitPrintfFifoSize), 1u << 20);
  EXPECT_EQ(limit(cudaLimitMallocHeapSize), 8u << 20);
  EXPECT_EQ(limit(cudaLimitDevRuntimePendingLaunchCount), 2048u);
  EXPECT_EQ(limit(cudaLimitMaxL2FetchGranularity), 64u);
  EXPECT_EQ(limit(cudaLimitPersistingL2CacheSize), 0u);

  ASSERT_EQ(cudaDeviceSetLimit(cudaLimitStackSize, 4096), cudaSuccess);
  ASSERT_EQ(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20), cudaSuccess);
  EXPECT_EQ(limit(cudaLimitStackSize), 4096u);
  EXPECT_EQ(limit(cudaLimitMallocHeapSize), 64u << 20);
  // Hints are clamped to what the device has.
  ASSERT_EQ(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, 512), cudaSuccess);
  EXPECT_EQ(limit(cudaLimitMaxL2FetchGranularity), 128u);
  int most = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&most, cudaDevAttrMaxPersistingL2CacheSize, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1ull << 40), cudaSuccess);
  EXPECT_EQ(limit(cudaLimitPersistingL2CacheSize), static_cast<size_t>(most));

  // The device runtime's synchronisation depth is gone from compute capability 9.0 on.
  size_t value = 0;
  EXPECT_EQ(cudaDeviceGetLimit(&value, cudaLimitDevRuntimeSyncDepth), cudaErrorUnsupportedLimit);
  EXPECT_EQ(cudaDeviceSetLimit(cudaLimitDevRuntimeSyncDepth, 4), cudaErrorUnsupportedLimit);
  EXPECT_EQ(cudaDeviceSetLimit(static_cast<cudaLimit>(42), 1), cudaErrorUnsupportedLimit);
  EXPECT_EQ(cudaDeviceGetLimit(nullptr, cudaLimitStackSize), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);

  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  EXPECT_EQ(limit(cudaLimitStackSize), 1024u);
  EXPECT_EQ(limit(cudaLimitMallocHeapSize), 8u << 20);
}

}  // namespace
