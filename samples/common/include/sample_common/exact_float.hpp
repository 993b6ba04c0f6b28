// Float arithmetic that rounds the same on a GPU, in a kernel's CPU implementation on simgpu
// and in a host mirror: every multiply and add rounds on its own and never fuses into an FMA
// (nvcc fuses by default; host code that includes this is built with -ffp-contract=off).
// Shared by the CUDA kernels and their CPU implementations of both sample trainers.
#pragma once

#if defined(__CUDACC__)
#define SAMPLE_HOST_DEVICE __host__ __device__
#else
#define SAMPLE_HOST_DEVICE
#endif

namespace sample_common::exact {

SAMPLE_HOST_DEVICE inline float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

SAMPLE_HOST_DEVICE inline float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

SAMPLE_HOST_DEVICE inline float sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

// SGD without momentum: param - lr * grad, each step rounded.
SAMPLE_HOST_DEVICE inline float sgdElement(float param, float grad, float lr) { return sub(param, mul(lr, grad)); }

}  // namespace sample_common::exact
