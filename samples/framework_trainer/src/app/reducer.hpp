// PyTorch DDP's reducer, as it runs with its defaults: gradients are assigned to flat bucket
// buffers (framework_trainer/ddp_buckets.hpp); as backward makes each gradient ready, it is
// divided by the world size into its bucket's view (an elementwise kernel: at::mul_out); a
// bucket whose gradients are all ready is summed by an all-reduce on the process group's own
// NCCL stream, after that stream waits for an event recorded on the compute stream
// (ProcessGroupNCCL's pattern), buckets strictly in order. At the end of backward the compute
// stream waits for every bucket's all-reduce and the averaged values are copied back into the
// gradients (gradient_as_bucket_view=False). With gradient_as_bucket_view=True the gradients
// are views into the buckets (ModelTensors::withGradientsIn): backward writes each gradient in
// its bucket, the division is in place, and nothing is copied back.
#pragma once

#include "bucket_launcher.hpp"
#include "step_context.hpp"

#include "framework_trainer/ddp_buckets.hpp"
#include "sample_common/cuda_resources.hpp"

#include <nccl.h>

#include <vector>

namespace framework_trainer {

class Reducer {
 public:
  Reducer(const StepContext& ctx, ncclComm_t comm, cudaStream_t nccl_stream);

  int buckets() const { return static_cast<int>(buckets_.size()); }

  // Called by backward (on its thread) when a parameter's gradient is final.
  void gradReady(int param);
  // After backward: makes the compute stream wait for the all-reduces and copies the results
  // back into the gradients. Throws if a gradient never became ready.
  void finalize();

 private:
  struct Slot {
    int bucket = 0;
    std::size_t offset = 0;  // elements, in the bucket's buffer
  };
  struct BucketState {
    Bucket assignment;
    DeviceTensor<float> copies;  // the flat buffer the gradients are copied into, unless they are views
    float* flat = nullptr;       // where the bucket's gradients are divided and summed
  };

  Reducer(const StepContext& ctx, ncclComm_t comm, cudaStream_t nccl_stream, std::vector<Bucket> assignment);

  const StepContext& ctx_;
  ncclComm_t comm_;
  cudaStream_t nccl_stream_;
  std::vector<BucketState> buckets_;
  std::vector<Slot> slots_;  // by parameter
  BucketLauncher launcher_;
};

}  // namespace framework_trainer
