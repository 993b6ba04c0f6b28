// Graphs built node by node: each node type does its work at every launch, after its
// dependencies; launches and uploads of one executable graph are ordered behind its previous
// launches; CUDA's errors for bad nodes, handles and flags, and what is not simulated.
#include "op_recorder.hpp"

#include <simgpu/core/kernels.hpp>

#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

// The CPU implementation of `void twice(int* data, int n)`.
extern "C" void simgpu_cpu__Z5twicePii(void** args) {
  int* data = *static_cast<int**>(args[0]);
  const int n = *static_cast<int*>(args[1]);
  for (int i = 0; i < n; ++i) data[i] *= 2;
}

namespace {

char twice_stub;                // stands for the host stub nvcc would generate
char extern_c_stub;             // a kernel whose parameter layout nothing can tell
char not_a_kernel[1024] = {};  // neither a host stub nor a kernel handle
constexpr int kGraphElements = 64;

class ExplicitGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    simgpu::registerKernel(&twice_stub, "_Z5twicePii");
    simgpu::registerKernel(&extern_c_stub, "opaque_kernel");
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&data_, kGraphElements * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaMallocHost(&host_, kGraphElements * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaGraphCreate(&graph_, 0), cudaSuccess);
  }
  void TearDown() override {
    EXPECT_EQ(cudaGraphDestroy(graph_), cudaSuccess);
    EXPECT_EQ(cudaFree(data_), cudaSuccess);
    EXPECT_EQ(cudaFreeHost(host_), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
    cudaGetLastError();
  }
  cudaKernelNodeParams twiceParams() {
    args_[0] = &data_;
    args_[1] = &n_;
    cudaKernelNodeParams p{};
    p.func = &twice_stub;
    p.gridDim = dim3(1);
    p.blockDim = dim3(64);
    p.kernelParams = args_;
    return p;
  }
  cudaMemsetParams fillParams(unsigned value) {
    cudaMemsetParams p{};
    p.dst = data_;
    p.value = value;
    p.elementSize = sizeof(int);
    p.width = kGraphElements;
    p.height = 1;
    return p;
  }
  cudaStream_t stream_ = nullptr;
  int* data_ = nullptr;
  int* host_ = nullptr;
  int n_ = kGraphElements;
  void* args_[2] = {};
  cudaGraph_t graph_ = nullptr;
};

TEST_F(ExplicitGraph, EveryNodeRunsAfterItsDependenciesAtEveryLaunch) {
  cudaEvent_t done = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), cudaSuccess);
  std::atomic<int> host_calls{0};
  std::vector<int> seen;  // what the host node found in the copy, per launch

  cudaGraphNode_t fill = nullptr, doubled = nullptr, copy = nullptr, check = nullptr, record = nullptr, join = nullptr;
  const cudaMemsetParams fill_params = fillParams(0x00000007);
  ASSERT_EQ(cudaGraphAddMemsetNode(&fill, graph_, nullptr, 0, &fill_params), cudaSuccess);
  const cudaKernelNodeParams kernel = twiceParams();
  ASSERT_EQ(cudaGraphAddKernelNode(&doubled, graph_, &fill, 1, &kernel), cudaSuccess);
  n_ = 0;  // the node copied its arguments when it was added
  ASSERT_EQ(cudaGraphAddMemcpyNode1D(&copy, graph_, &doubled, 1, host_, data_, kGraphElements * sizeof(int),
                                     cudaMemcpyDeviceToHost),
            cudaSuccess);
  struct Check {
    std::atomic<int>* calls;
    std::vector<int>* seen;
    const int* host;
  } state{&host_calls, &seen, host_};
  cudaHostNodeParams host_params{[](void* p) {
                                   auto* s = static_cast<Check*>(p);
                                   ++*s->calls;
                                   s->seen->push_back(s->host[kGraphElements - 1]);
                                 },
                                 &state};
  ASSERT_EQ(cudaGraphAddHostNode(&check, graph_, &copy, 1, &host_params), cudaSuccess);
  ASSERT_EQ(cudaGraphAddEventRecordNode(&record, graph_, &check, 1, done), cudaSuccess);
  const cudaGraphNode_t both[] = {doubled, record};
  ASSERT_EQ(cudaGraphAddEmptyNode(&join, graph_, both, 2), cudaSuccess);

  size_t count = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph_, nullptr, &count), cudaSuccess);
  ASSERT_EQ(count, 6u);
  std::vector<cudaGraphNode_t> nodes(count);
  ASSERT_EQ(cudaGraphGetNodes(graph_, nodes.data(), &count), cudaSuccess);
  std::vector<cudaGraphNodeType> types;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    ASSERT_EQ(cudaGraphNodeGetType(node, &type), cudaSuccess);
    types.push_back(type);
  }
  EXPECT_EQ(types, (std::vector<cudaGraphNodeType>{cudaGraphNodeTypeMemset, cudaGraphNodeTypeKernel,
                                                   cudaGraphNodeTypeMemcpy, cudaGraphNodeTypeHost,
                                                   cudaGraphNodeTypeEventRecord, cudaGraphNodeTypeEmpty}));

  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiateWithFlags(&exec, graph_, cudaGraphInstantiateFlagAutoFreeOnLaunch), cudaSuccess);
  EXPECT_EQ(host_calls.load(), 0) << "nothing runs before a launch";
  ASSERT_EQ(cudaGraphUpload(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(done), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(host_calls.load(), 2);
  EXPECT_EQ(seen, (std::vector<int>{14, 14})) << "filled with 7, doubled, copied: at every launch";
  ASSERT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaErrorInvalidValue);
  ASSERT_EQ(cudaEventDestroy(done), cudaSuccess);
}

TEST_F(ExplicitGraph, ElementsOfTwoBytesAndPitchedCopies) {
  cudaGraphNode_t fill = nullptr, copy = nullptr;
  cudaMemsetParams fill_params = fillParams(0xabcd1234u);
  fill_params.elementSize = 2;
  fill_params.width = 2 * kGraphElements;
  ASSERT_EQ(cudaGraphAddMemsetNode(&fill, graph_, nullptr, 0, &fill_params), cudaSuccess);
  // Rows 1 and 2 of 4 bytes from a pitch of 16 bytes into a packed host buffer.
  cudaMemcpy3DParms p{};
  p.srcPtr = make_cudaPitchedPtr(data_, 16, 16, 4);
  p.srcPos = make_cudaPos(4, 1, 0);
  p.dstPtr = make_cudaPitchedPtr(host_, 4, 4, 2);
  p.extent = make_cudaExtent(4, 2, 1);
  p.kind = cudaMemcpyDeviceToHost;
  ASSERT_EQ(cudaGraphAddMemcpyNode(&copy, graph_, &fill, 1, &p), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph_, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(static_cast<unsigned>(host_[0]), 0x12341234u) << "each 2-byte element is the value's low half";
  EXPECT_EQ(static_cast<unsigned>(host_[1]), 0x12341234u);
  ASSERT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
}

TEST_F(ExplicitGraph, AnEventWaitNodeHoldsTheLaunchUntilTheEvent) {
  cudaStream_t other = nullptr;
  cudaEvent_t ready = nullptr;
  ASSERT_EQ(cudaStreamCreate(&other), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), cudaSuccess);
  cudaGraphNode_t wait = nullptr, fill = nullptr;
  ASSERT_EQ(cudaGraphAddEventWaitNode(&wait, graph_, nullptr, 0, ready), cudaSuccess);
  const cudaMemsetParams fill_params = fillParams(1);
  ASSERT_EQ(cudaGraphAddMemsetNode(&fill, graph_, &wait, 1, &fill_params), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph_, 0), cudaSuccess);

  simgpu::testing::Gate gate;
  ASSERT_EQ(simgpu::enqueue(other, gate.op()), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(ready, other), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(stream_), cudaErrorNotReady) << "the launch waits for the event";
  gate.open();
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  ASSERT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  ASSERT_EQ(cudaEventDestroy(ready), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(other), cudaSuccess);
}

TEST_F(ExplicitGraph, LaunchesAndUploadsFollowTheGraphsPreviousLaunches) {
  cudaGraphNode_t fill = nullptr;
  const cudaMemsetParams fill_params = fillParams(3);
  ASSERT_EQ(cudaGraphAddMemsetNode(&fill, graph_, nullptr, 0, &fill_params), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph_, 0), cudaSuccess);
  cudaStream_t second = nullptr, third = nullptr;
  ASSERT_EQ(cudaStreamCreate(&second), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&third), cudaSuccess);

  simgpu::testing::Gate gate;
  ASSERT_EQ(simgpu::enqueue(stream_, gate.op()), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, second), cudaSuccess);
  ASSERT_EQ(cudaGraphUpload(exec, third), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(second), cudaErrorNotReady) << "behind the launch held on the first stream";
  EXPECT_EQ(cudaStreamQuery(third), cudaErrorNotReady) << "an upload too";
  gate.open();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(second), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(third), cudaSuccess);
}

TEST_F(ExplicitGraph, BadNodesHandlesAndFlagsGiveCudasErrors) {
  cudaGraph_t other = nullptr;
  EXPECT_EQ(cudaGraphCreate(&other, 1), cudaErrorInvalidValue) << "flags must be 0";
  ASSERT_EQ(cudaGraphCreate(&other, 0), cudaSuccess);
  cudaGraphNode_t foreign = nullptr, node = nullptr, empty = nullptr;
  ASSERT_EQ(cudaGraphAddEmptyNode(&foreign, other, nullptr, 0), cudaSuccess);
  EXPECT_EQ(cudaGraphAddEmptyNode(&node, graph_, &foreign, 1), cudaErrorInvalidValue) << "a node of another graph";
  ASSERT_EQ(cudaGraphAddEmptyNode(&empty, graph_, nullptr, 0), cudaSuccess);
  const cudaGraphNode_t twice_the_same[] = {empty, empty};
  EXPECT_EQ(cudaGraphAddEmptyNode(&node, graph_, twice_the_same, 2), cudaErrorInvalidValue) << "duplicates";
  EXPECT_EQ(cudaGraphAddEmptyNode(&node, graph_, nullptr, 1), cudaErrorInvalidValue);
  ASSERT_EQ(cudaGraphDestroy(other), cudaSuccess);
  EXPECT_EQ(cudaGraphAddEmptyNode(&node, other, nullptr, 0), cudaErrorInvalidValue) << "destroyed";

  cudaKernelNodeParams kernel = twiceParams();
  EXPECT_EQ(cudaGraphAddKernelNode(&node, graph_, nullptr, 0, nullptr), cudaErrorInvalidValue);
  kernel.func = not_a_kernel;
  EXPECT_EQ(cudaGraphAddKernelNode(&node, graph_, nullptr, 0, &kernel), cudaErrorInvalidDeviceFunction);
  kernel = twiceParams();
  kernel.blockDim = dim3(4096);
  EXPECT_EQ(cudaGraphAddKernelNode(&node, graph_, nullptr, 0, &kernel), cudaErrorInvalidConfiguration);
  kernel = twiceParams();
  void* extra[] = {nullptr};
  kernel.extra = extra;
  EXPECT_EQ(cudaGraphAddKernelNode(&node, graph_, nullptr, 0, &kernel), cudaErrorInvalidValue) << "both ways";
  kernel.kernelParams = nullptr;
  EXPECT_EQ(cudaGraphAddKernelNode(&node, graph_, nullptr, 0, &kernel), cudaErrorNotSupported) << "not simulated";
  kernel = twiceParams();
  kernel.func = &extern_c_stub;
  EXPECT_EQ(cudaGraphAddKernelNode(&node, graph_, nullptr, 0, &kernel), cudaErrorNotSupported)
      << "arguments of an unknown layout cannot be kept";

  cudaMemsetParams fill = fillParams(0);
  fill.elementSize = 3;
  EXPECT_EQ(cudaGraphAddMemsetNode(&node, graph_, nullptr, 0, &fill), cudaErrorInvalidValue);
  fill = fillParams(0);
  fill.height = 2;
  fill.pitch = 4;
  EXPECT_EQ(cudaGraphAddMemsetNode(&node, graph_, nullptr, 0, &fill), cudaErrorInvalidValue) << "pitch below the row";
  EXPECT_EQ(cudaGraphAddMemcpyNode1D(&node, graph_, nullptr, 0, host_, data_, 4, static_cast<cudaMemcpyKind>(9)),
            cudaErrorInvalidMemcpyDirection);
  cudaMemcpy3DParms copy{};
  copy.extent = make_cudaExtent(4, 1, 2);
  EXPECT_EQ(cudaGraphAddMemcpyNode(&node, graph_, nullptr, 0, &copy), cudaErrorNotSupported) << "3D: not simulated";
  cudaHostNodeParams host{};
  EXPECT_EQ(cudaGraphAddHostNode(&node, graph_, nullptr, 0, &host), cudaErrorInvalidValue) << "no function";
  cudaEvent_t gone = nullptr;
  ASSERT_EQ(cudaEventCreate(&gone), cudaSuccess);
  ASSERT_EQ(cudaEventDestroy(gone), cudaSuccess);
  EXPECT_EQ(cudaGraphAddEventRecordNode(&node, graph_, nullptr, 0, gone), cudaErrorInvalidValue);
  cudaGraphNodeType type{};
  int not_a_node = 0;
  EXPECT_EQ(cudaGraphNodeGetType(reinterpret_cast<cudaGraphNode_t>(&not_a_node), &type), cudaErrorInvalidValue);

  cudaGraphExec_t exec = nullptr;
  EXPECT_EQ(cudaGraphInstantiate(&exec, graph_, cudaGraphInstantiateFlagUpload), cudaErrorInvalidValue)
      << "only cudaGraphInstantiateWithParams uploads";
  EXPECT_EQ(cudaGraphInstantiate(&exec, graph_, 1ull << 20), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGraphInstantiate(&exec, graph_, cudaGraphInstantiateFlagDeviceLaunch), cudaErrorNotSupported);
  EXPECT_EQ(cudaGraphInstantiate(&exec, other, 0), cudaErrorInvalidValue);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph_, 0), cudaSuccess);
  int not_a_stream = 0;
  EXPECT_EQ(cudaGraphLaunch(exec, reinterpret_cast<cudaStream_t>(&not_a_stream)), cudaErrorInvalidResourceHandle);
  ASSERT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphLaunch(exec, stream_), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGraphUpload(exec, stream_), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

}  // namespace
