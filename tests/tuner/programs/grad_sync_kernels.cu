// grad_sync's kernels. `cost` only prices the launch in simgpu's profile (tests/tuner/profiles).
#include "grad_sync_kernels.hpp"

#include "grad_sync_math.hpp"

namespace {
constexpr int kThreads = 256;
unsigned blocks(int n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }
}  // namespace

__global__ void produce_gradient(float* grad, int count, int rank, int iteration, int layer, [[maybe_unused]] int cost) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) grad[i] = grad_sync::gradientValue(rank, iteration, layer, i);
}

__global__ void apply_update(float* acc, const float* grad, int count, [[maybe_unused]] int cost) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) acc[i] = grad_sync::accumulate(acc[i], grad[i]);
}

// A kernel without C++ linkage, whose parameter layout nothing can derive from its name: it
// reads the gradients and changes nothing (on simgpu, which cannot run it, it only takes time).
extern "C" __global__ void inspect_gradient(const float* grad, int count, float* sink) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i == 0 && count > 0 && grad[0] != grad[0]) *sink = grad[0];  // never true for finite values
}

cudaError_t launchProduce(cudaStream_t s, float* grad, int count, int rank, int iteration, int layer, int cost,
                          LaunchPath path) {
  if (path == LaunchPath::Cuda13) {
    produce_gradient<<<blocks(count), kThreads, 0, s>>>(grad, count, rank, iteration, layer, cost);
    return cudaGetLastError();
  }
  struct {
    float* grad;
    int count, rank, iteration, layer, cost;
  } packed{grad, count, rank, iteration, layer, cost};
  void* args[] = {&grad, &count, &rank, &iteration, &layer, &cost};
  return launchThrough(path, reinterpret_cast<const void*>(&produce_gradient), dim3(blocks(count)), dim3(kThreads), args,
                       &packed, sizeof packed, s);
}

cudaError_t launchUpdate(cudaStream_t s, float* acc, const float* grad, int count, int cost, LaunchPath path) {
  if (path == LaunchPath::Cuda13) {
    apply_update<<<blocks(count), kThreads, 0, s>>>(acc, grad, count, cost);
    return cudaGetLastError();
  }
  struct {
    float* acc;
    const float* grad;
    int count, cost;
  } packed{acc, grad, count, cost};
  void* args[] = {&acc, &grad, &count, &cost};
  return launchThrough(path, reinterpret_cast<const void*>(&apply_update), dim3(blocks(count)), dim3(kThreads), args,
                       &packed, sizeof packed, s);
}

cudaError_t launchInspect(cudaStream_t s, const float* grad, int count, float* sink) {
  inspect_gradient<<<1, 1, 0, s>>>(grad, count, sink);
  return cudaGetLastError();
}

cudaError_t addUpdateNodes(cudaGraph_t graph, float* const* acc, const float* const* grad, int layers, int count, int cost) {
  cudaGraphNode_t previous = nullptr;
  for (int l = 0; l < layers; ++l) {
    float* a = acc[l];
    const float* g = grad[l];
    void* args[] = {&a, &g, &count, &cost};  // copied when the node is added
    cudaKernelNodeParams p{};
    p.func = reinterpret_cast<void*>(apply_update);
    p.gridDim = dim3(blocks(count));
    p.blockDim = dim3(kThreads);
    p.kernelParams = args;
    cudaGraphNode_t node = nullptr;
    const cudaError_t err = cudaGraphAddKernelNode(&node, graph, previous == nullptr ? nullptr : &previous,
                                                   previous == nullptr ? 0 : 1, &p);
    if (err != cudaSuccess) return err;
    previous = node;
  }
  return cudaSuccess;
}
