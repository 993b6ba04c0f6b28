// The device a rank uses: its local rank modulo the devices it sees, made current for the
// calling thread.
#pragma once

#include "sample_common/cuda_check.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace sample_common {

inline int selectDevice(int local_rank) {
  int count = 0;
  const cudaError_t result = cudaGetDeviceCount(&count);
  if (result != cudaSuccess || count == 0) {
    throw std::runtime_error(fmt::format(
        "no CUDA device is visible (cudaGetDeviceCount: {}); on a machine without a GPU, run through "
        "scripts/run-on-simgpu.sh",
        cudaGetErrorString(result)));
  }
  const int device = local_rank % count;
  SAMPLE_CUDA(cudaSetDevice(device));
  return device;
}

}  // namespace sample_common
