// What the code that issues a step (forward.cpp, backward.cpp, reducer.cpp, sharded_optimizer.cpp,
// trainer.cpp) shares: the model's sizes, where its parameters and gradients are
// (model_tensors.hpp), the caching allocator for activations, the compute stream, and the
// issuer through which every kernel, copy and collective goes (issuer.hpp).
#pragma once

#include "device_allocator.hpp"
#include "issuer.hpp"
#include "model_tensors.hpp"

#include "framework_trainer/options.hpp"

#include <cstdint>
#include <functional>

namespace framework_trainer {

struct StepContext {
  const Options& options;
  const ParamLayout& layout;
  int rank = 0;
  int world_size = 1;
  DeviceAllocator& allocator;
  cudaStream_t compute = nullptr;
  const ModelTensors& tensors;
  Issuer& issue;
  // Called before a kernel that reads parameter `index` is issued: zero1 with
  // --overlap-param-gather makes the compute stream wait there for the bucket's all-gather, as
  // Megatron-LM's forward pre-hooks do. Empty: nothing to wait for.
  std::function<void(int index)> before_param_read;

  const ModelConfig& config() const { return options.config; }
  float* param(int index) const {
    if (before_param_read) before_param_read(index);
    return tensors.param(index);
  }
  float* grad(int index) const { return tensors.grad(index); }
  DeviceTensor<float> activation(std::int64_t numel) const { return {allocator, numel, compute}; }
};

}  // namespace framework_trainer
