// The CUDA, NCCL and NVTX headers as the preload library needs them: cuda.h without its
// `#define cuFoo cuFoo_v2` renames, because the library defines and resolves functions by
// their exported ABI names (cuMemAlloc_v2, cuGetProcAddress, cuGetProcAddress_v2).
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
