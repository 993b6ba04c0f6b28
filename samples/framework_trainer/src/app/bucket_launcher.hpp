// Gradient buckets launched strictly in order as backward makes their gradients final, as
// PyTorch DDP's reducer launches its all-reduces and Megatron-LM's --overlap-grad-reduce its
// reduce-scatters: once a bucket's last gradient is in and every bucket before it has been
// launched, an event recorded on the compute stream, the communication stream waiting for it,
// the bucket's collective on the communication stream, and an event recorded after it; after
// backward the compute stream waits for each bucket's event.
#pragma once

#include "sample_common/cuda_resources.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace framework_trainer {

class BucketLauncher {
 public:
  // Each bucket's number of gradients, in launch order.
  explicit BucketLauncher(std::vector<std::size_t> gradients)
      : gradients_(gradients), pending_(std::move(gradients)), ready_(pending_.size()), done_(pending_.size()) {}

  // One gradient (`name`) of bucket `b` is final: every bucket now ready is launched, in order,
  // with `collective(bucket, comm)`. Throws if the bucket had all its gradients already.
  template <class Collective>
  void gradientIn(std::size_t b, const std::string& name, cudaStream_t compute, cudaStream_t comm,
                  Collective&& collective) {
    if (pending_[b] == 0) throw std::logic_error(fmt::format("{}'s gradient was made ready twice in one backward", name));
    --pending_[b];
    while (next_ < pending_.size() && pending_[next_] == 0) {
      const std::size_t launch = next_++;
      SAMPLE_CUDA(cudaEventRecord(ready_[launch].get(), compute));
      SAMPLE_CUDA(cudaStreamWaitEvent(comm, ready_[launch].get(), 0));
      collective(launch, comm);
      SAMPLE_CUDA(cudaEventRecord(done_[launch].get(), comm));
    }
  }

  // After backward: for each bucket in order, the compute stream waits for it and
  // `after(bucket)` runs; the counts start again for the next backward. Throws if a bucket was
  // never launched (a gradient never became final).
  template <class After>
  void finish(cudaStream_t compute, After&& after) {
    if (next_ != pending_.size()) {
      throw std::logic_error(
          fmt::format("backward left gradient bucket {} of {} with gradients not ready", next_, pending_.size()));
    }
    for (std::size_t b = 0; b < pending_.size(); ++b) {
      SAMPLE_CUDA(cudaStreamWaitEvent(compute, done_[b].get(), 0));
      after(b);
    }
    pending_ = gradients_;
    next_ = 0;
  }

 private:
  std::vector<std::size_t> gradients_, pending_;
  std::vector<sample_common::Event> ready_, done_;
  std::size_t next_ = 0;
};

}  // namespace framework_trainer
