// torch.optim.SGD(foreach=True): params -= lr * grads, as multi-tensor apply launches that read
// and write the float weights and read the float gradients. One object per set of tensors the
// step covers: every parameter and gradient (naive, ddp), or this rank's shards of them (zero1,
// fsdp).
#pragma once

#include "issuer.hpp"

#include "framework_trainer/tensor_lists.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace framework_trainer {

class SgdStep {
 public:
  SgdStep() = default;
  // Pairs (params[i], grads[i]) of numels[i] floats each.
  SgdStep(const std::vector<const void*>& params, const std::vector<const void*>& grads,
          const std::vector<std::int64_t>& numels);

  void issue(Issuer& issue, cudaStream_t stream, float lr) const;

 private:
  std::vector<TensorListLaunch> plan_;
  std::vector<TensorListMetadata<2>> lists_;
};

}  // namespace framework_trainer
