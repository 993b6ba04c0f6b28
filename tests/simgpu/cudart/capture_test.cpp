// Stream capture and graphs: captured work does not run, replays run it (every time), and the
// rules CUDA enforces during capture (no syncs on capturing streams, no implicit legacy-stream
// dependencies, joined forks, the capture modes, captured events) give CUDA's errors.
#include <simgpu/core/kernels.hpp>

#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

// The CPU implementation of `void increment(int* data, int n)`.
extern "C" void simgpu_cpu__Z9incrementPii(void** args) {
  int* data = *static_cast<int**>(args[0]);
  const int n = *static_cast<int*>(args[1]);
  for (int i = 0; i < n; ++i) ++data[i];
}

namespace {

char increment_stub;  // stands for the host stub nvcc would generate

class Capture : public ::testing::Test {
 protected:
  void SetUp() override {
    simgpu::registerKernel(&increment_stub, "_Z9incrementPii");
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&data_, n_ * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaMemset(data_, 0, n_ * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  void TearDown() override {
    EXPECT_EQ(cudaFree(data_), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
    cudaGetLastError();
  }
  cudaError_t increment(cudaStream_t s) {
    void* args[] = {&data_, &n_};
    return cudaLaunchKernel(&increment_stub, dim3(1), dim3(64), args, 0, s);
  }
  std::vector<int> data() {
    std::vector<int> out(static_cast<std::size_t>(n_));
    EXPECT_EQ(cudaMemcpy(out.data(), data_, out.size() * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
  cudaStream_t stream_ = nullptr;
  int* data_ = nullptr;
  int n_ = 64;
};

TEST_F(Capture, CapturedWorkRunsOnlyWhenTheGraphIsLaunched) {
  std::atomic<int> host_calls{0};
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ASSERT_EQ(cudaStreamIsCapturing(stream_, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  ASSERT_EQ(increment(stream_), cudaSuccess);
  ASSERT_EQ(increment(stream_), cudaSuccess);
  ASSERT_EQ(cudaLaunchHostFunc(stream_, [](void* p) { ++*static_cast<std::atomic<int>*>(p); }, &host_calls),
            cudaSuccess);
  unsigned long long id = 0;
  cudaGraph_t in_progress = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  size_t num_deps = 0;
  ASSERT_EQ(cudaStreamGetCaptureInfo(stream_, &status, &id, &in_progress, &deps, nullptr, &num_deps), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  EXPECT_NE(id, 0u);
  EXPECT_NE(in_progress, nullptr);
  EXPECT_EQ(num_deps, 1u) << "the next op depends on the last captured one";
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  ASSERT_NE(graph, nullptr);
  ASSERT_EQ(cudaStreamIsCapturing(stream_, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
  EXPECT_EQ(nodes, 3u);
  EXPECT_EQ(data(), std::vector<int>(64, 0)) << "capturing runs nothing";
  EXPECT_EQ(host_calls.load(), 0);

  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(data(), std::vector<int>(64, 4)) << "two launches of two increments";
  EXPECT_EQ(host_calls.load(), 2);
  ASSERT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  ASSERT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaErrorInvalidValue);
}

TEST_F(Capture, SynchronisingACapturingStreamInvalidatesTheCapture) {
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  ASSERT_EQ(increment(stream_), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream_), cudaErrorStreamCaptureUnsupported);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ASSERT_EQ(cudaStreamIsCapturing(stream_, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusInvalidated);
  EXPECT_EQ(increment(stream_), cudaErrorStreamCaptureInvalidated);
  cudaGraph_t graph = reinterpret_cast<cudaGraph_t>(1);
  EXPECT_EQ(cudaStreamEndCapture(stream_, &graph), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(data(), std::vector<int>(64, 0));
}

TEST_F(Capture, TheLegacyStreamMayNotDependOnACapturingBlockingStream) {
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed), cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  EXPECT_EQ(cudaStreamIsCapturing(nullptr, &status), cudaErrorStreamCaptureImplicit);
  EXPECT_EQ(increment(nullptr), cudaErrorStreamCaptureImplicit);
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(stream_, &graph), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);
}

TEST_F(Capture, ForkedStreamsMustBeJoinedBack) {
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), cudaSuccess);

  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  ASSERT_EQ(increment(stream_), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(fork, stream_), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(fork), cudaErrorCapturedEvent);
  ASSERT_EQ(cudaStreamWaitEvent(side, fork, 0), cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ASSERT_EQ(cudaStreamIsCapturing(side, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive) << "waiting on a captured event joins the capture";
  ASSERT_EQ(increment(side), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(join, side), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(stream_, join, 0), cudaSuccess);
  ASSERT_EQ(increment(stream_), cudaSuccess);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  ASSERT_EQ(cudaStreamIsCapturing(side, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(data(), std::vector<int>(64, 3));
  ASSERT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  ASSERT_EQ(cudaGraphDestroy(graph), cudaSuccess);

  // The same fork without the join back.
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(fork, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(side, fork, 0), cudaSuccess);
  ASSERT_EQ(increment(side), cudaSuccess);
  EXPECT_EQ(cudaStreamEndCapture(stream_, &graph), cudaErrorStreamCaptureUnjoined);
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(cudaStreamEndCapture(side, &graph), cudaErrorIllegalState) << "the whole sequence ended";

  ASSERT_EQ(cudaEventDestroy(fork), cudaSuccess);
  ASSERT_EQ(cudaEventDestroy(join), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(side), cudaSuccess);
}

TEST_F(Capture, CaptureModesGovernUnsafeCalls) {
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  ASSERT_EQ(increment(stream_), cudaSuccess);
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  ASSERT_EQ(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
  EXPECT_EQ(mode, cudaStreamCaptureModeGlobal);
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 16), cudaSuccess) << "a relaxed thread may allocate";
  ASSERT_EQ(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&p, 16), cudaErrorStreamCaptureUnsupported);
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(stream_, &graph), cudaErrorStreamCaptureInvalidated);

  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  std::thread other([&] {
    cudaGraph_t g = nullptr;
    EXPECT_EQ(cudaStreamEndCapture(stream_, &g), cudaErrorStreamCaptureWrongThread);
  });
  other.join();
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_EQ(cudaFree(p), cudaSuccess);
}

}  // namespace
