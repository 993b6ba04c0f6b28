// The backward pass, issued on the backward thread (autograd_thread.hpp) on the compute
// stream, from the loss to the embeddings. Weight gradients are written (not accumulated:
// PyTorch's zero_grad(set_to_none=True) makes the first write an assignment), except the tied
// token embedding's second contribution. After the last kernel that writes a parameter's
// gradient, `ready` is called with the parameter's index, as autograd's AccumulateGrad fires
// DDP's hooks.
#pragma once

#include "forward.hpp"

#include <functional>

namespace framework_trainer {

using GradReady = std::function<void(int param)>;

// Releases the activations as it goes, as autograd frees saved tensors; `units` runs around
// each unit's kernels (unit_hooks.hpp).
void issueBackward(const StepContext& ctx, Activations act, int iteration, const GradReady& ready, UnitHooks& units);

}  // namespace framework_trainer
