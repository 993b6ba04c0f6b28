#pragma once

#include <cuda_runtime.h>

#include "launch_paths.hpp"

cudaError_t launchProduce(cudaStream_t s, float* grad, int count, int rank, int iteration, int layer, int cost,
                          LaunchPath path = LaunchPath::Cuda13);
cudaError_t launchUpdate(cudaStream_t s, float* acc, const float* grad, int count, int cost,
                         LaunchPath path = LaunchPath::Cuda13);
cudaError_t launchInspect(cudaStream_t s, const float* grad, int count, float* sink);
// Adds to `graph` one update node per layer, each after the one before (a graph built node by
// node, as launchUpdate launches them one by one).
cudaError_t addUpdateNodes(cudaGraph_t graph, float* const* acc, const float* const* grad, int layers, int count, int cost);
