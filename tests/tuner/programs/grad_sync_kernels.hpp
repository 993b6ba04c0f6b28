#pragma once

#include <cuda_runtime.h>

cudaError_t launchProduce(cudaStream_t s, float* grad, int count, int rank, int iteration, int layer, int cost);
cudaError_t launchUpdate(cudaStream_t s, float* acc, const float* grad, int count, int cost);
cudaError_t launchInspect(cudaStream_t s, const float* grad, int count, float* sink);
