// Kernels whose parameter layouts only their module can tell (param_info_test.cpp): a struct
// passed by value, an extern "C" kernel, a template. simgpu runs none of them.
#include "param_info_kernels.hpp"

__global__ void with_struct(int n, ParamInfoBig big, float* out) {
  if (n > 0) out[0] = static_cast<float>(big.words[0]);
}

extern "C" __global__ void plain_c(const float* in, int n, float* out) {
  if (n > 0) out[0] = in[0];
}

template <class T>
__global__ void scaled(T* data, T factor, char flag) {
  if (flag != 0) data[0] *= factor;
}

const void* withStructKernel() { return reinterpret_cast<const void*>(&with_struct); }
const void* plainCKernel() { return reinterpret_cast<const void*>(&plain_c); }
const void* scaledKernel() { return reinterpret_cast<const void*>(&scaled<double>); }
