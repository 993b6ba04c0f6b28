// What runs around each FSDP unit's kernels (fsdp_units.hpp: the root unit and one per block)
// in forward and backward, as FSDP's pre- and post-forward and pre- and post-backward hooks
// run around each wrapped module; nothing in the other modes, whose parameters are always
// there. Forward calls beforeForward(root) first and afterForward(root) last, with each block's
// unit in between; backward calls beforeBackward(root) first (the loss, the LM head and ln_f are
// the root's), then each block's unit in reverse, then afterBackward(root) last (the embeddings).
#pragma once

namespace framework_trainer {

class UnitHooks {
 public:
  virtual ~UnitHooks() = default;
  virtual void beforeForward(int /*unit*/) {}
  virtual void afterForward(int /*unit*/) {}
  virtual void beforeBackward(int /*unit*/) {}
  virtual void afterBackward(int /*unit*/) {}
};

}  // namespace framework_trainer
