// A CUDA program for the collector's tests of managed memory, memory pools and graphs built by
// hand: it makes each call once, in a fixed order (the test lists them), launches its graph
// twice, and prints the addresses it was given:
//   memory_graph_workload managed=A pool_block=B async_block=C
// (decimal), with A of 1 MiB of managed memory, B 256 KiB from a pool it makes, C 64 KiB from
// the device's default pool.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "check_cuda.hpp"

__global__ void scale(float* data, int count) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) data[i] *= 2.0f;
}

namespace {

constexpr std::size_t kManagedBytes = 1 << 20;
constexpr std::size_t kPoolBytes = 256 << 10;
constexpr std::size_t kAsyncBytes = 64 << 10;

}  // namespace

int main() {
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream));

  float* managed = nullptr;
  CHECK(cudaMallocManaged(&managed, kManagedBytes));
  const cudaMemLocation device0{cudaMemLocationTypeDevice, 0};
  CHECK(cudaMemAdvise(managed, kManagedBytes, cudaMemAdviseSetPreferredLocation, device0));
  CHECK(cudaStreamAttachMemAsync(stream, managed, 0, cudaMemAttachSingle));
  CHECK(cudaMemPrefetchAsync(managed, kManagedBytes, device0, 0, stream));

  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location = device0;
  cudaMemPool_t pool = nullptr;
  CHECK(cudaMemPoolCreate(&pool, &props));
  std::uint64_t keep = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  void* pool_block = nullptr;
  void* async_block = nullptr;
  CHECK(cudaMallocFromPoolAsync(&pool_block, kPoolBytes, pool, stream));
  CHECK(cudaMallocAsync(&async_block, kAsyncBytes, stream));

  // zero the pool's block, scale the managed memory, copy the block's start into the other.
  cudaGraph_t graph = nullptr;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaMemsetParams zero{};
  zero.dst = pool_block;
  zero.elementSize = 4;
  zero.width = kPoolBytes / 4;
  zero.height = 1;
  cudaGraphNode_t fill = nullptr, kernel = nullptr, copy = nullptr;
  CHECK(cudaGraphAddMemsetNode(&fill, graph, nullptr, 0, &zero));
  int count = static_cast<int>(kManagedBytes / sizeof(float));
  void* args[] = {&managed, &count};
  cudaKernelNodeParams launch{};
  launch.func = reinterpret_cast<void*>(scale);
  launch.gridDim = dim3(static_cast<unsigned>(count / 256));
  launch.blockDim = dim3(256);
  launch.kernelParams = args;
  CHECK(cudaGraphAddKernelNode(&kernel, graph, &fill, 1, &launch));
  CHECK(cudaGraphAddMemcpyNode1D(&copy, graph, &kernel, 1, async_block, pool_block, kAsyncBytes,
                                 cudaMemcpyDeviceToDevice));
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphUpload(exec, stream));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaGraphLaunch(exec, stream));

  CHECK(cudaFreeAsync(pool_block, stream));
  CHECK(cudaFreeAsync(async_block, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 2048));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaMemPoolTrimTo(pool, 0));
  CHECK(cudaMemPoolDestroy(pool));
  CHECK(cudaFree(managed));
  CHECK(cudaStreamDestroy(stream));
  std::printf("memory_graph_workload managed=%llu pool_block=%llu async_block=%llu\n",
              static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(managed)),
              static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(pool_block)),
              static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(async_block)));
  return 0;
}
