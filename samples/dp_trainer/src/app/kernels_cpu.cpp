// CPU implementations of dp_trainer's kernels, for simgpu (docs/simgpu.md, "Kernels: names,
// parameters, CPU implementations"): simgpu looks up `simgpu_cpu_<mangled kernel name>` in the
// program's dynamic symbol table (the executable is linked with ENABLE_EXPORTS) and calls it
// with the launch's argument array, so that the data on simgpu is what a GPU would compute.
// Each one loops over the elements the kernel's threads cover, with the same per-element
// maths (dp_trainer/layer_math.hpp). The test dp_trainer.cpu_kernels checks that every
// kernel in the binary has one, so a changed signature (and mangled name) cannot go unnoticed.
#include "dp_trainer/layer_math.hpp"

#include <array>
#include <cstring>

namespace {

namespace dpm = dp_trainer::math;

// The value of the launch's parameter `index` (args[index] points at it).
template <class T>
T arg(void** args, int index) {
  T value;
  std::memcpy(&value, args[index], sizeof(T));
  return value;
}

}  // namespace

// layer_forward(float*, float*, const float*, const float*, int, int, int, int, int)
extern "C" void simgpu_cpu__Z13layer_forwardPfS_PKfS1_iiiii(void** args) {
  auto* out = arg<float*>(args, 0);
  auto* act = arg<float*>(args, 1);
  const auto* in = arg<const float*>(args, 2);
  const auto* params = arg<const float*>(args, 3);
  const int batch = arg<int>(args, 4);
  const int width = arg<int>(args, 5);
  for (int b = 0; b < batch; ++b) {
    for (int j = 0; j < width; ++j) dpm::forwardElement(out, act, in, params, width, b, j);
  }
}

// mse_loss(float*, float*, const float*, const float*, int, int, int, int): the same 256
// partial sums and tree as the kernel's one block, so the loss is bitwise the GPU's.
extern "C" void simgpu_cpu__Z8mse_lossPfS_PKfS1_iiii(void** args) {
  constexpr int kLossThreads = 256;
  auto* grad_out = arg<float*>(args, 0);
  auto* loss = arg<float*>(args, 1);
  const auto* out = arg<const float*>(args, 2);
  const auto* target = arg<const float*>(args, 3);
  const int count = arg<int>(args, 4) * arg<int>(args, 5);
  std::array<float, kLossThreads> partial{};
  for (int t = 0; t < kLossThreads; ++t) {
    for (int i = t; i < count; i += kLossThreads) {
      grad_out[i] = dpm::lossGradElement(out, target, count, i);
      partial[static_cast<std::size_t>(t)] = dpm::add(partial[static_cast<std::size_t>(t)], dpm::squaredError(out, target, i));
    }
  }
  for (int stride = kLossThreads / 2; stride > 0; stride /= 2) {
    for (int t = 0; t < stride; ++t) {
      partial[static_cast<std::size_t>(t)] =
          dpm::add(partial[static_cast<std::size_t>(t)], partial[static_cast<std::size_t>(t + stride)]);
    }
  }
  *loss = partial[0] / static_cast<float>(count);
}

// layer_backward_params(float*, const float*, const float*, const float*, int, int, int, int, int)
extern "C" void simgpu_cpu__Z21layer_backward_paramsPfPKfS1_S1_iiiii(void** args) {
  auto* grad_params = arg<float*>(args, 0);
  const auto* grad_out = arg<const float*>(args, 1);
  const auto* act = arg<const float*>(args, 2);
  const auto* in = arg<const float*>(args, 3);
  const int batch = arg<int>(args, 4);
  const int width = arg<int>(args, 5);
  for (int i = 0; i < width * width + width; ++i) {
    grad_params[i] = dpm::add(grad_params[i], dpm::paramGradElement(grad_out, act, in, batch, width, i));
  }
}

// layer_backward_input(float*, const float*, const float*, const float*, int, int, int, int, int)
extern "C" void simgpu_cpu__Z20layer_backward_inputPfPKfS1_S1_iiiii(void** args) {
  auto* grad_in = arg<float*>(args, 0);
  const auto* grad_out = arg<const float*>(args, 1);
  const auto* act = arg<const float*>(args, 2);
  const auto* params = arg<const float*>(args, 3);
  const int batch = arg<int>(args, 4);
  const int width = arg<int>(args, 5);
  for (int b = 0; b < batch; ++b) {
    for (int k = 0; k < width; ++k) grad_in[b * width + k] = dpm::inputGradElement(grad_out, act, params, width, b, k);
  }
}

// sgd_update(float*, const float*, int, float, int, int)
extern "C" void simgpu_cpu__Z10sgd_updatePfPKfifii(void** args) {
  auto* params = arg<float*>(args, 0);
  const auto* grads = arg<const float*>(args, 1);
  const int count = arg<int>(args, 2);
  const float lr = arg<float>(args, 3);
  for (int i = 0; i < count; ++i) params[i] = dpm::sgdElement(params[i], grads[i], lr);
}
