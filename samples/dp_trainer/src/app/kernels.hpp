// Launchers of dp_trainer's kernels (src/app/kernels.cu). Each kernel also takes the modelled
// LLM block's sizes as trailing int parameters (see dp_trainer/kernel_signatures.hpp): the
// real maths ignores them; simgpu's profile prices the launch from them.
#pragma once

#include <cuda_runtime_api.h>

namespace dp_trainer {

struct ModelledCost {
  int tokens = 0;       // tokens per rank per step
  int hidden = 0;       // d_model
  int block_width = 0;  // 12 * d_model
};

cudaError_t launchLayerForward(cudaStream_t stream, float* out, float* act, const float* in, const float* params,
                               int batch, int width, const ModelledCost& cost);
cudaError_t launchMseLoss(cudaStream_t stream, float* grad_out, float* loss, const float* out, const float* target,
                          int batch, int width, const ModelledCost& cost);
cudaError_t launchLayerBackwardParams(cudaStream_t stream, float* grad_params, const float* grad_out,
                                      const float* act, const float* in, int batch, int width,
                                      const ModelledCost& cost);
cudaError_t launchLayerBackwardInput(cudaStream_t stream, float* grad_in, const float* grad_out, const float* act,
                                     const float* params, int batch, int width, const ModelledCost& cost);
cudaError_t launchSgdUpdate(cudaStream_t stream, float* params, const float* grads, int count, float lr,
                            const ModelledCost& cost);

}  // namespace dp_trainer
