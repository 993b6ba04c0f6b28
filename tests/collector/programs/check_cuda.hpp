// The collector's test programs stop at the first CUDA call that fails, saying which call, why,
// and in which program.
#pragma once

#include <cuda_runtime.h>
#include <errno.h>  // program_invocation_short_name

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                                    \
  do {                                                                                                 \
    cudaError_t error_ = (call);                                                                       \
    if (error_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s: %s failed: %s\n", program_invocation_short_name, #call,                \
                   cudaGetErrorString(error_));                                                        \
      std::exit(1);                                                                                    \
    }                                                                                                  \
  } while (0)
