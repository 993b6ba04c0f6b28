// dp_trainer's kernels: one thread per output element, the maths in dp_trainer/layer_math.hpp.
// The trailing cost_* parameters are unused by the maths: they carry the modelled LLM
// block's sizes for simgpu's profile (dp_trainer/kernel_signatures.hpp lists the positions).
// Each kernel has a CPU implementation for simgpu in kernels_cpu.cpp.
#include "kernels.hpp"

#include "dp_trainer/layer_math.hpp"

namespace {

constexpr int kThreads = 256;
constexpr int kLossThreads = 256;  // mse_loss runs as one block: a deterministic reduction

unsigned blocksFor(int elements) { return static_cast<unsigned>((elements + kThreads - 1) / kThreads); }

}  // namespace

namespace dpm = dp_trainer::math;

__global__ void layer_forward(float* out, float* act, const float* in, const float* params, int batch, int width,
                              [[maybe_unused]] int cost_tokens, [[maybe_unused]] int cost_hidden,
                              [[maybe_unused]] int cost_block_width) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= batch * width) return;
  dpm::forwardElement(out, act, in, params, width, i / width, i % width);
}

__global__ void mse_loss(float* grad_out, float* loss, const float* out, const float* target, int batch, int width,
                         [[maybe_unused]] int cost_tokens, [[maybe_unused]] int cost_hidden) {
  __shared__ float partial[kLossThreads];
  const int count = batch * width;
  const int t = static_cast<int>(threadIdx.x);
  float sum = 0.0f;
  for (int i = t; i < count; i += kLossThreads) {
    grad_out[i] = dpm::lossGradElement(out, target, count, i);
    sum = dpm::add(sum, dpm::squaredError(out, target, i));
  }
  partial[t] = sum;
  __syncthreads();
  for (int stride = kLossThreads / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] = dpm::add(partial[t], partial[t + stride]);
    __syncthreads();
  }
  if (t == 0) *loss = partial[0] / static_cast<float>(count);
}

__global__ void layer_backward_params(float* grad_params, const float* grad_out, const float* act, const float* in,
                                      int batch, int width, [[maybe_unused]] int cost_tokens,
                                      [[maybe_unused]] int cost_hidden, [[maybe_unused]] int cost_block_width) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= width * width + width) return;
  // Accumulates, as autograd does into .grad (zeroed once per iteration).
  grad_params[i] = dpm::add(grad_params[i], dpm::paramGradElement(grad_out, act, in, batch, width, i));
}

__global__ void layer_backward_input(float* grad_in, const float* grad_out, const float* act, const float* params,
                                     int batch, int width, [[maybe_unused]] int cost_tokens,
                                     [[maybe_unused]] int cost_hidden, [[maybe_unused]] int cost_block_width) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= batch * width) return;
  grad_in[i] = dpm::inputGradElement(grad_out, act, params, width, i / width, i % width);
}

__global__ void sgd_update(float* params, const float* grads, int count, float lr, [[maybe_unused]] int cost_hidden,
                           [[maybe_unused]] int cost_block_width) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  params[i] = dpm::sgdElement(params[i], grads[i], lr);
}

namespace dp_trainer {

cudaError_t launchLayerForward(cudaStream_t stream, float* out, float* act, const float* in, const float* params,
                               int batch, int width, const ModelledCost& cost) {
  layer_forward<<<blocksFor(batch * width), kThreads, 0, stream>>>(out, act, in, params, batch, width, cost.tokens,
                                                                   cost.hidden, cost.block_width);
  return cudaGetLastError();
}

cudaError_t launchMseLoss(cudaStream_t stream, float* grad_out, float* loss, const float* out, const float* target,
                          int batch, int width, const ModelledCost& cost) {
  mse_loss<<<1, kLossThreads, 0, stream>>>(grad_out, loss, out, target, batch, width, cost.tokens, cost.hidden);
  return cudaGetLastError();
}

cudaError_t launchLayerBackwardParams(cudaStream_t stream, float* grad_params, const float* grad_out,
                                      const float* act, const float* in, int batch, int width,
                                      const ModelledCost& cost) {
  layer_backward_params<<<blocksFor(width * width + width), kThreads, 0, stream>>>(
      grad_params, grad_out, act, in, batch, width, cost.tokens, cost.hidden, cost.block_width);
  return cudaGetLastError();
}

cudaError_t launchLayerBackwardInput(cudaStream_t stream, float* grad_in, const float* grad_out, const float* act,
                                     const float* params, int batch, int width, const ModelledCost& cost) {
  layer_backward_input<<<blocksFor(batch * width), kThreads, 0, stream>>>(grad_in, grad_out, act, params, batch, width,
                                                                          cost.tokens, cost.hidden, cost.block_width);
  return cudaGetLastError();
}

cudaError_t launchSgdUpdate(cudaStream_t stream, float* params, const float* grads, int count, float lr,
                            const ModelledCost& cost) {
  sgd_update<<<blocksFor(count), kThreads, 0, stream>>>(params, grads, count, lr, cost.hidden, cost.block_width);
  return cudaGetLastError();
}

}  // namespace dp_trainer
