// Errors through libnccl.so.2: bad arguments give ncclInvalidArgument with a sentence;
// mismatched calls fail on every rank with ncclInvalidUsage; a rank that never comes, leaves
// or aborts fails its peers with ncclRemoteError; never a hang.
#include "api_fixture.hpp"

#include <cuda_runtime_api.h>
#include "reference.hpp"

#include <chrono>
#include <cstdlib>
#include <string>

namespace simgpu::nccl {
namespace {

using testing::DeviceBuffer;
using testing::FourDevices;

using testing::lastError;

using Errors = FourDevices;

TEST_F(Errors, InvalidArguments) {
  DeviceBuffer buf(0, 1024);
  ncclComm_t c = comms[0];
  cudaStream_t s = streams[0];
  EXPECT_EQ(ncclAllReduce(buf.get(), buf.get(), 4, ncclFloat32, ncclSum, nullptr, s), ncclInvalidArgument);
  EXPECT_NE(lastError().find("comm argument is NULL"), std::string::npos) << lastError();
  EXPECT_EQ(ncclAllReduce(buf.get(), buf.get(), 4, static_cast<ncclDataType_t>(12), ncclSum, c, s), ncclInvalidArgument);
  EXPECT_NE(lastError().find("invalid type 12"), std::string::npos) << lastError();
  EXPECT_EQ(ncclAllReduce(buf.get(), buf.get(), 4, ncclFloat32, static_cast<ncclRedOp_t>(-1), c, s), ncclInvalidArgument);
  EXPECT_EQ(ncclAllReduce(buf.get(), buf.get(), 4, ncclFloat32, static_cast<ncclRedOp_t>(9), c, s), ncclInvalidArgument);
  EXPECT_NE(lastError().find("unknown to this communicator"), std::string::npos) << lastError();
  EXPECT_EQ(ncclReduce(buf.get(), buf.get(), 4, ncclFloat32, ncclSum, 4, c, s), ncclInvalidArgument);
  EXPECT_NE(lastError().find("invalid root 4"), std::string::npos) << lastError();
  EXPECT_EQ(ncclSend(buf.get(), 4, ncclFloat32, -1, c, s), ncclInvalidArgument);
  EXPECT_NE(lastError().find("invalid peer -1"), std::string::npos) << lastError();
  EXPECT_EQ(ncclAllGather(buf.get(), buf.get(), SIZE_MAX / 2, ncclFloat32, c, s), ncclInvalidArgument);
  EXPECT_NE(lastError().find("overflows"), std::string::npos) << lastError();
  EXPECT_EQ(ncclAllReduce(nullptr, buf.get(), 4, ncclFloat32, ncclSum, c, s), ncclInvalidArgument);
  EXPECT_NE(lastError().find("sendbuff argument is NULL"), std::string::npos) << lastError();
  EXPECT_EQ(ncclRecv(nullptr, 4, ncclFloat32, 1, c, s), ncclInvalidArgument);
  // 1024 bytes hold 256 floats: 257 run past the end of the allocation.
  EXPECT_EQ(ncclAllReduce(buf.get(), buf.get(), 257, ncclFloat32, ncclSum, c, s), ncclInvalidArgument);
  EXPECT_NE(lastError().find("runs past the end of its allocation"), std::string::npos) << lastError();
  // A stream that does not exist.
  EXPECT_EQ(ncclAllReduce(buf.get(), buf.get(), 4, ncclFloat32, ncclSum, c, reinterpret_cast<cudaStream_t>(0x1234)),
            ncclUnhandledCudaError);
  int out = 0;
  EXPECT_EQ(ncclCommCount(nullptr, &out), ncclInvalidArgument);
  EXPECT_EQ(ncclCommCount(c, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclGetVersion(nullptr), ncclInvalidArgument);
  // None of this touched the communicator.
  EXPECT_EQ(asyncError(0), ncclSuccess);
}

TEST_F(Errors, MismatchedCountsFailEveryRankWithoutHanging) {
  std::vector<DeviceBuffer> bufs;
  for (int d = 0; d < kDevices; ++d) bufs.emplace_back(d, 4096);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) {
    const std::size_t count = d == 2 ? 512 : 256;
    ASSERT_EQ(ncclAllReduce(bufs[d].get(), bufs[d].get(), count, ncclFloat32, ncclSum, comms[d], streams[d]), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  syncAll();
  for (int d = 0; d < kDevices; ++d) EXPECT_EQ(asyncError(d), ncclInvalidUsage) << "rank " << d;
  const std::string message = lastError();
  EXPECT_NE(message.find("rank(s) 0, 1, 3 called AllReduce(count=256, float32, sum)"), std::string::npos) << message;
  EXPECT_NE(message.find("rank(s) 2 called AllReduce(count=512, float32, sum)"), std::string::npos) << message;
  // The communicator stays failed: calls are refused with the same code.
  EXPECT_EQ(ncclAllReduce(bufs[0].get(), bufs[0].get(), 4, ncclFloat32, ncclSum, comms[0], streams[0]), ncclInvalidUsage);
}

TEST_F(Errors, MismatchedSendRecvFailsEveryRank) {
  std::vector<DeviceBuffer> bufs;
  for (int d = 0; d < kDevices; ++d) bufs.emplace_back(d, 4096);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclSend(bufs[0].get(), 100, ncclFloat32, 1, comms[0], streams[0]), ncclSuccess);
  ASSERT_EQ(ncclRecv(bufs[1].get(), 100, ncclInt32, 0, comms[1], streams[1]), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  syncAll();
  EXPECT_EQ(asyncError(0), ncclInvalidUsage);
  EXPECT_EQ(asyncError(1), ncclInvalidUsage);
  // Ranks 2 and 3 took no part, but their communicator is the same failed one.
  EXPECT_EQ(asyncError(2), ncclInvalidUsage);
  EXPECT_EQ(asyncError(3), ncclInvalidUsage);
  EXPECT_NE(lastError().find("rank 0 sent message #0 to rank 1 as count=100 float32"), std::string::npos) << lastError();
}

TEST_F(Errors, APeerThatLeavesFailsTheOthersAtOnce) {
  ASSERT_EQ(ncclCommDestroy(comms[3]), ncclSuccess);
  comms[3] = nullptr;
  std::vector<DeviceBuffer> bufs;
  for (int d = 0; d < 3; ++d) bufs.emplace_back(d, 64);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < 3; ++d) ASSERT_EQ(ncclAllReduce(bufs[d].get(), bufs[d].get(), 16, ncclFloat32, ncclSum, comms[d], streams[d]), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  for (int d = 0; d < 3; ++d) testing::sync(streams[d]);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  for (int d = 0; d < 3; ++d) EXPECT_EQ(asyncError(d), ncclRemoteError);
  EXPECT_NE(lastError().find("rank 3 left the communicator"), std::string::npos) << lastError();
}

TEST_F(Errors, AnAbortFailsThePeers) {
  ASSERT_EQ(ncclCommAbort(comms[1]), ncclSuccess);
  comms[1] = nullptr;
  for (int d : {0, 2, 3}) EXPECT_EQ(asyncError(d), ncclRemoteError);
  EXPECT_NE(lastError().find("rank 1 aborted"), std::string::npos) << lastError();
  EXPECT_EQ(ncclCommAbort(nullptr), ncclSuccess);
}

TEST(ErrorsTimeout, ARankThatNeverComesTimesOut) {
  testing::useTestProfile();
  setenv("SIMGPU_NCCL_TIMEOUT_S", "0.5", 1);
  ncclComm_t comms[2];
  ASSERT_EQ(ncclCommInitAll(comms, 2, nullptr), ncclSuccess);
  unsetenv("SIMGPU_NCCL_TIMEOUT_S");
  DeviceBuffer buf(0, 64);
  cudaStream_t s = testing::makeStream(0);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(ncclAllReduce(buf.get(), buf.get(), 16, ncclFloat32, ncclSum, comms[0], s), ncclSuccess);
  testing::sync(s);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ncclResult_t state;
  ASSERT_EQ(ncclCommGetAsyncError(comms[0], &state), ncclSuccess);
  EXPECT_EQ(state, ncclRemoteError);
  EXPECT_NE(lastError().find("no progress for 0.5 s"), std::string::npos) << lastError();
  EXPECT_NE(lastError().find("waiting for rank(s) 1"), std::string::npos) << lastError();
  // Rank 1 learns that the communicator failed.
  ASSERT_EQ(ncclCommGetAsyncError(comms[1], &state), ncclSuccess);
  EXPECT_EQ(state, ncclRemoteError);
  simgpu::destroyStream(s);
  ncclCommDestroy(comms[0]);
  ncclCommDestroy(comms[1]);
}

TEST(ErrorsTimeout, ABadTimeoutIsRefused) {
  testing::useTestProfile();
  setenv("SIMGPU_NCCL_TIMEOUT_S", "soon", 1);
  ncclComm_t comms[2];
  EXPECT_EQ(ncclCommInitAll(comms, 2, nullptr), ncclInvalidArgument);
  unsetenv("SIMGPU_NCCL_TIMEOUT_S");
  EXPECT_NE(lastError().find("SIMGPU_NCCL_TIMEOUT_S=soon"), std::string::npos) << lastError();
}

// NCCL calls captured into a CUDA graph would run when the graph runs; simgpu does not
// replay them, so it refuses them rather than run them at capture time.
TEST_F(Errors, CallsDuringGraphCaptureAreRefused) {
  DeviceBuffer buf(0, 64);
  ASSERT_EQ(simgpu::setCurrentDevice(0), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(streams[0], cudaStreamCaptureModeRelaxed), cudaSuccess);
  EXPECT_EQ(ncclAllReduce(buf.get(), buf.get(), 16, ncclFloat32, ncclSum, comms[0], streams[0]), ncclInvalidUsage);
  EXPECT_EQ(lastError(), "ncclAllReduce during CUDA graph capture is not simulated");
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(streams[0], &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_EQ(asyncError(0), ncclSuccess);
}

TEST(Unsupported, APIsOutsideTheSubsetSayWhatIsNotSimulated) {
  EXPECT_EQ(ncclCommRevoke(nullptr, 0), ncclInvalidUsage);
  EXPECT_EQ(lastError(), "ncclCommRevoke is not simulated");
  ncclWindow_t win = nullptr;
  EXPECT_EQ(ncclCommWindowRegister(nullptr, nullptr, 0, &win, 0), ncclInvalidUsage);
  EXPECT_EQ(lastError(), "ncclCommWindowRegister is not simulated");
  EXPECT_EQ(ncclCommWindowDeregister(nullptr, win), ncclInvalidUsage);
}

}  // namespace
}  // namespace simgpu::nccl
