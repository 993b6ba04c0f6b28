#include "launch_paths.hpp"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace {

template <class F>
F symbol(const char* name) {
  // The process-wide lookup: the first definition in the global scope, the preload library's
  // interposer when one is preloaded, as a program linked against libcuda would bind.
  auto* function = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  if (function == nullptr) {
    std::fprintf(stderr, "grad_sync: the driver has no %s\n", name);
    std::exit(2);
  }
  return function;
}

template <class F>
F entryPoint(const char* name) {
  static const auto get = symbol<decltype(&cuGetProcAddress_v2)>("cuGetProcAddress_v2");
  void* function = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (get(name, &function, 12080, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || function == nullptr) {
    std::fprintf(stderr, "grad_sync: cuGetProcAddress(%s) failed\n", name);
    std::exit(2);
  }
  return reinterpret_cast<F>(function);
}

cudaError_t fromDriver(CUresult result) { return result == CUDA_SUCCESS ? cudaSuccess : cudaErrorLaunchFailure; }

}  // namespace

void openDriver() {
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    std::fprintf(stderr, "grad_sync: no driver: %s\n", dlerror());
    std::exit(2);
  }
  if (symbol<decltype(&cuInit)>("cuInit")(0) != CUDA_SUCCESS) std::exit(2);
}

cudaError_t launchThrough(LaunchPath path, const void* stub, dim3 grid, dim3 block, void** args, void* packed,
                          std::size_t packed_bytes, cudaStream_t stream) {
  if (path == LaunchPath::Runtime) return cudaLaunchKernel(stub, grid, block, args, 0, stream);
  if (path == LaunchPath::RuntimeEx) {
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.stream = stream;
    return cudaLaunchKernelExC(&config, stub, args);
  }
  cudaFunction_t function = nullptr;
  if (cudaError_t e = cudaGetFuncBySymbol(&function, stub); e != cudaSuccess) return e;
  const auto f = reinterpret_cast<CUfunction>(function);
  const auto s = reinterpret_cast<CUstream>(stream);
  static const auto launch = symbol<decltype(&cuLaunchKernel)>("cuLaunchKernel");
  static const auto launch_handed_out = entryPoint<decltype(&cuLaunchKernel)>("cuLaunchKernel");
  static const auto launch_ex = symbol<decltype(&cuLaunchKernelEx)>("cuLaunchKernelEx");
  static const auto launch_ex_handed_out = entryPoint<decltype(&cuLaunchKernelEx)>("cuLaunchKernelEx");
  CUlaunchConfig config{};
  config.gridDimX = grid.x, config.gridDimY = grid.y, config.gridDimZ = grid.z;
  config.blockDimX = block.x, config.blockDimY = block.y, config.blockDimZ = block.z;
  config.hStream = s;
  switch (path) {
    case LaunchPath::Driver:
      return fromDriver(launch(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, 0, s, args, nullptr));
    case LaunchPath::DriverProc:
      return fromDriver(launch_handed_out(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, 0, s, args, nullptr));
    case LaunchPath::DriverEx:
      return fromDriver(launch_ex(&config, f, args, nullptr));
    case LaunchPath::DriverExProc:
      return fromDriver(launch_ex_handed_out(&config, f, args, nullptr));
    case LaunchPath::DriverPacked: {
      void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_bytes,
                       CU_LAUNCH_PARAM_END};
      return fromDriver(launch_handed_out(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, 0, s, nullptr, extra));
    }
    default:
      return cudaErrorInvalidValue;
  }
}
