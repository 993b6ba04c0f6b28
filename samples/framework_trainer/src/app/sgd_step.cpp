#include "sgd_step.hpp"

#include "kernels.hpp"

#include <array>

namespace framework_trainer {

SgdStep::SgdStep(const std::vector<const void*>& params, const std::vector<const void*>& grads,
                 const std::vector<std::int64_t>& numels)
    : plan_(planTensorLists(numels, 2)) {
  lists_ = fillTensorLists<2>(plan_, std::array<std::vector<const void*>, 2>{params, grads}, numels);
}

void SgdStep::issue(Issuer& issue, cudaStream_t stream, float lr) const {
  for (std::size_t i = 0; i < lists_.size(); ++i) {
    FT_KERNEL(issue, kernels::multiTensorSgd(stream, 12 * plan_[i].elements, lists_[i], SgdFunctor{lr}));
  }
}

}  // namespace framework_trainer
