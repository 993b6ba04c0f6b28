// __device__ and __constant__ variables. simgpu keeps a variable's value in its host shadow
// (the object nvcc registers with __cudaRegisterVar), so the "device address" of a symbol is
// the shadow's address: cudaMemcpyToSymbol writes it and CPU implementations of kernels read
// the same variable by name.
#pragma once

#include <simgpu/core/export.hpp>

#include <cstddef>

namespace simgpu {

struct DeviceVariable {
  void* address = nullptr;
  std::size_t size = 0;
};

SIMGPU_API void registerVariable(void* host_shadow, std::size_t size);
// The variable `symbol` (its host shadow's address) names; size 0 if it is not registered.
SIMGPU_API DeviceVariable findVariable(const void* symbol);

}  // namespace simgpu
