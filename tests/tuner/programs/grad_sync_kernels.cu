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

// The same update without C++ linkage: no parameter layout can be derived from its name.
extern "C" __global__ void apply_update_c(float* acc, const float* grad, int count, int cost) {
  (void)cost;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) acc[i] = grad_sync::accumulate(acc[i], grad[i]);
}

cudaError_t launchProduce(cudaStream_t s, float* grad, int count, int rank, int iteration, int layer, int cost) {
  produce_gradient<<<blocks(count), kThreads, 0, s>>>(grad, count, rank, iteration, layer, cost);
  return cudaGetLastError();
}

cudaError_t launchUpdate(cudaStream_t s, float* acc, const float* grad, int count, int cost, bool extern_c) {
  if (extern_c) {
    apply_update_c<<<blocks(count), kThreads, 0, s>>>(acc, grad, count, cost);
  } else {
    apply_update<<<blocks(count), kThreads, 0, s>>>(acc, grad, count, cost);
  }
  return cudaGetLastError();
}
