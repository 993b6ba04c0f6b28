// Turning CUDA and NCCL error codes into exceptions that say which call failed, and where.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <fmt/format.h>

#include <stdexcept>

namespace dp_trainer {

inline void checkCuda(cudaError_t result, const char* call, const char* file, int line) {
  if (result != cudaSuccess) {
    throw std::runtime_error(fmt::format("{} failed: {} ({}) at {}:{}", call, cudaGetErrorName(result),
                                         cudaGetErrorString(result), file, line));
  }
}

inline void checkNccl(ncclResult_t result, const char* call, const char* file, int line) {
  if (result != ncclSuccess) {
    throw std::runtime_error(fmt::format("{} failed: {} at {}:{}", call, ncclGetErrorString(result), file, line));
  }
}

}  // namespace dp_trainer

#define DPT_CUDA(call) ::dp_trainer::checkCuda((call), #call, __FILE__, __LINE__)
#define DPT_NCCL(call) ::dp_trainer::checkNccl((call), #call, __FILE__, __LINE__)
