// A communicator over the four devices of one process (ncclCommInitAll), one stream each.
#pragma once

#include "api_harness.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>

namespace simgpu::nccl::testing {

// What the library said of the calling thread's last failed call.
inline std::string lastError() { return ncclGetLastError(nullptr); }

class FourDevices : public ::testing::Test {
 protected:
  static constexpr int kDevices = 4;

  static void SetUpTestSuite() { useTestProfile(); }

  void SetUp() override {
    ASSERT_EQ(ncclCommInitAll(comms.data(), kDevices, nullptr), ncclSuccess);
    for (int d = 0; d < kDevices; ++d) streams[static_cast<std::size_t>(d)] = makeStream(d);
  }

  void TearDown() override {
    for (int d = 0; d < kDevices; ++d) {
      simgpu::synchronizeStream(streams[static_cast<std::size_t>(d)]);
      simgpu::destroyStream(streams[static_cast<std::size_t>(d)]);
      if (comms[static_cast<std::size_t>(d)] != nullptr) ncclCommDestroy(comms[static_cast<std::size_t>(d)]);
    }
  }

  void syncAll() {
    for (cudaStream_t s : streams) sync(s);
  }

  ncclResult_t asyncError(int d) {
    ncclResult_t state = ncclInternalError;
    EXPECT_EQ(ncclCommGetAsyncError(comms[static_cast<std::size_t>(d)], &state), ncclSuccess);
    return state;
  }

  std::array<ncclComm_t, kDevices> comms{};
  std::array<cudaStream_t, kDevices> streams{};
};

}  // namespace simgpu::nccl::testing
