// What the code that issues a step (forward.cpp, backward.cpp, reducer.cpp, sharded_optimizer.cpp,
// trainer.cpp) shares: the model's sizes, its parameter and gradient tensors, the caching allocator, the
// compute stream, and the issuer through which every kernel, copy and collective goes, so
// that each is checked and counted (framework_trainer/op_counts.hpp).
#pragma once

#include "device_allocator.hpp"

#include "framework_trainer/op_counts.hpp"
#include "framework_trainer/options.hpp"
#include "sample_common/cuda_check.hpp"

#include <nccl.h>

#include <vector>

namespace framework_trainer {

class Issuer {
 public:
  void kernel(cudaError_t launched, const char* what, const char* file, int line) {
    sample_common::checkCuda(launched, what, file, line);
    ++counts_.kernels;
  }
  void copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
    SAMPLE_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, stream));
    ++counts_.memcpys;
  }
  void memset(void* dst, std::size_t bytes, cudaStream_t stream) {
    SAMPLE_CUDA(cudaMemsetAsync(dst, 0, bytes, stream));
    ++counts_.memsets;
  }
  void allReduce(float* data, std::size_t count, ncclComm_t comm, cudaStream_t stream) {
    SAMPLE_NCCL(ncclAllReduce(data, data, count, ncclFloat, ncclAvg, comm, stream));
    ++counts_.collectives;
  }
  void collective(ncclResult_t issued, const char* what, const char* file, int line) {
    sample_common::checkNccl(issued, what, file, line);
    ++counts_.collectives;
  }
  const OpCounts& counts() const { return counts_; }

 private:
  // The main thread and the backward thread issue in turn (autograd_thread.hpp), never at once.
  OpCounts counts_;
};

#define FT_KERNEL(issuer, call) (issuer).kernel((call), #call, __FILE__, __LINE__)
#define FT_COLLECTIVE(issuer, call) (issuer).collective((call), #call, __FILE__, __LINE__)

struct StepContext {
  const Options& options;
  const ParamLayout& layout;
  int rank = 0;
  DeviceAllocator& allocator;
  cudaStream_t compute = nullptr;
  std::vector<DeviceTensor<float>>& params;
  std::vector<DeviceTensor<float>>& grads;
  Issuer& issue;

  const ModelConfig& config() const { return options.config; }
  float* param(int index) const { return params[static_cast<std::size_t>(index)].get(); }
  float* grad(int index) const { return grads[static_cast<std::size_t>(index)].get(); }
  DeviceTensor<float> activation(std::int64_t numel) const { return {allocator, numel, compute}; }
};

}  // namespace framework_trainer
