// The one way the step's code issues work: every kernel, copy, fill and collective goes
// through an Issuer, which checks its result and counts it, so that what an iteration issues
// can be held to the formulas of framework_trainer/op_counts.hpp.
#pragma once

#include "framework_trainer/op_counts.hpp"
#include "sample_common/cuda_check.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>

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
  // In place: ncclAvg for a hand-written loop, ncclSum for DDP, which divides before.
  void allReduce(float* data, std::size_t count, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    SAMPLE_NCCL(ncclAllReduce(data, data, count, ncclFloat, op, comm, stream));
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

}  // namespace framework_trainer

#define FT_KERNEL(issuer, call) (issuer).kernel((call), #call, __FILE__, __LINE__)
#define FT_COLLECTIVE(issuer, call) (issuer).collective((call), #call, __FILE__, __LINE__)
