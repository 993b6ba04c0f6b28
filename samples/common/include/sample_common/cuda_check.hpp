// Turning CUDA and NCCL error codes into exceptions that say which call failed, and where.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <fmt/format.h>

#include <stdexcept>

namespace sample_common {

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

}  // namespace sample_common

#define SAMPLE_CUDA(call) ::sample_common::checkCuda((call), #call, __FILE__, __LINE__)
#define SAMPLE_NCCL(call) ::sample_common::checkNccl((call), #call, __FILE__, __LINE__)
