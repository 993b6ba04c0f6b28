#include "api_harness.hpp"

#include <gtest/gtest.h>

namespace simgpu::nccl {
namespace {

using testing::DeviceBuffer;

TEST(Smoke, AllReduceOnFourDevices) {
  testing::useTestProfile();
  ncclComm_t comms[4];
  ASSERT_EQ(ncclCommInitAll(comms, 4, nullptr), ncclSuccess);
  std::vector<DeviceBuffer> bufs;
  std::vector<cudaStream_t> streams;
  for (int d = 0; d < 4; ++d) {
    bufs.emplace_back(d, 100 * sizeof(float));
    for (int i = 0; i < 100; ++i) reinterpret_cast<float*>(bufs[d].get())[i] = static_cast<float>(d + i);
    streams.push_back(testing::makeStream(d));
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < 4; ++d) {
    ASSERT_EQ(ncclAllReduce(bufs[d].get(), bufs[d].get(), 100, ncclFloat32, ncclSum, comms[d], streams[d]), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  for (int d = 0; d < 4; ++d) testing::sync(streams[d]);
  for (int d = 0; d < 4; ++d) {
    for (int i = 0; i < 100; ++i) EXPECT_EQ(reinterpret_cast<float*>(bufs[d].get())[i], 6.0f + 4.0f * i);
    ncclResult_t async;
    EXPECT_EQ(ncclCommGetAsyncError(comms[d], &async), ncclSuccess);
    EXPECT_EQ(async, ncclSuccess);
    EXPECT_EQ(ncclCommDestroy(comms[d]), ncclSuccess);
  }
}

}  // namespace
}  // namespace simgpu::nccl
