// Every way a kernel reaches the GPU, each of which the runtime must see and order: CUDA 13's
// launch stubs (<<<>>>: __cudaLaunchKernel), CUDA 12's cudaLaunchKernel and cudaLaunchKernelExC
// (what PyTorch wheels call), and the driver's cuLaunchKernel and cuLaunchKernelEx, called by
// name or through entry points from cuGetProcAddress (how cuBLAS and NCCL launch), with an
// argument array or a packed parameter buffer.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

enum class LaunchPath : int { Cuda13, Runtime, RuntimeEx, Driver, DriverProc, DriverEx, DriverExProc, DriverPacked };
inline constexpr int kLaunchPaths = 8;

// Loads the driver (libcuda.so.1) into the global scope, as the runtime does; exits with 2 when
// there is none.
void openDriver();

// Launches the kernel of host stub `stub` through `path` (any but Cuda13, which only nvcc's
// <<<>>> stubs take): `args` holds one pointer per parameter, `packed` the same parameters laid
// out as the kernel's parameter buffer, for the packed path. Driver errors are
// cudaErrorLaunchFailure.
cudaError_t launchThrough(LaunchPath path, const void* stub, dim3 grid, dim3 block, void** args, void* packed,
                          std::size_t packed_bytes, cudaStream_t stream);
