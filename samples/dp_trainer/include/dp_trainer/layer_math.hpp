// The model's maths per output element, shared by the CUDA kernels (src/app/kernels.cu) and
// their CPU implementations for simgpu (src/app/kernels_cpu.cpp), so both compute the same
// thing in the same order. The host's double-precision reference (reference.hpp) is written
// separately on purpose: it checks these.
//
// Multiplies and adds go through mul()/add()/sub() (sample_common/exact_float.hpp), which never
// fuse into an FMA: the SGD update must round identically on a GPU, in simgpu and in the host's
// mirror of the weights.
#pragma once

#include "sample_common/exact_float.hpp"

#include <cmath>

namespace dp_trainer::math {

using sample_common::exact::add;
using sample_common::exact::mul;
using sample_common::exact::sgdElement;
using sample_common::exact::sub;

// Forward of element (b, j): act = tanh(b_j + sum_k W[j][k] in[b][k]); out = in[b][j] + act.
SAMPLE_HOST_DEVICE inline void forwardElement(float* out, float* act, const float* in, const float* params, int width,
                                           int b, int j) {
  const float* w_row = params + j * width;
  const float* in_row = in + b * width;
  float pre = params[width * width + j];
  for (int k = 0; k < width; ++k) pre = add(pre, mul(w_row[k], in_row[k]));
  const float a = tanhf(pre);
  act[b * width + j] = a;
  out[b * width + j] = add(in_row[j], a);
}

// d(loss)/d(pre-activation) of element (b, j), from the gradient reaching the block's output.
SAMPLE_HOST_DEVICE inline float preActivationGrad(const float* grad_out, const float* act, int width, int b, int j) {
  const float a = act[b * width + j];
  return mul(grad_out[b * width + j], sub(1.0f, mul(a, a)));
}

// Gradient of parameter `index` of a layer (W[j][k] for index < width^2, else b_j), summed
// over the batch in sample order.
SAMPLE_HOST_DEVICE inline float paramGradElement(const float* grad_out, const float* act, const float* in, int batch,
                                              int width, int index) {
  float sum = 0.0f;
  if (index < width * width) {
    const int j = index / width;
    const int k = index % width;
    for (int b = 0; b < batch; ++b) sum = add(sum, mul(preActivationGrad(grad_out, act, width, b, j), in[b * width + k]));
  } else {
    const int j = index - width * width;
    for (int b = 0; b < batch; ++b) sum = add(sum, preActivationGrad(grad_out, act, width, b, j));
  }
  return sum;
}

// Gradient reaching the block's input, element (b, k): the residual path plus W^T delta.
SAMPLE_HOST_DEVICE inline float inputGradElement(const float* grad_out, const float* act, const float* params, int width,
                                              int b, int k) {
  float sum = grad_out[b * width + k];
  for (int j = 0; j < width; ++j) sum = add(sum, mul(preActivationGrad(grad_out, act, width, b, j), params[j * width + k]));
  return sum;
}

// Loss gradient of element i: d/d(out) of mean((out - target)^2) over `count` elements.
SAMPLE_HOST_DEVICE inline float lossGradElement(const float* out, const float* target, int count, int i) {
  return mul(2.0f / static_cast<float>(count), sub(out[i], target[i]));
}

SAMPLE_HOST_DEVICE inline float squaredError(const float* out, const float* target, int i) {
  const float d = sub(out[i], target[i]);
  return mul(d, d);
}

}  // namespace dp_trainer::math
