// A layer is one stage between the application and the real CUDA/NCCL libraries. The chain of
// a family is built once, when its real library is first found: bottom (real) -> layers in
// registration order -> the exported symbols. To build its table a layer receives a copy of the
// table below it, replaces the entries it wants to see, and keeps `next` (which lives for the
// rest of the process) to call on. A layer's functions must never throw and must call `next`
// for the call to happen at all; that is how a layer can also defer or redirect a call.
#pragma once

#include "dispatch/tables.hpp"

namespace syncopate::preload {

struct Layer {
  const char* name;
  // Each may be null when the layer does not look at that family.
  void (*wrapCudart)(CudartTable& table, const CudartTable& next) noexcept;
  void (*wrapDriver)(DriverTable& table, const DriverTable& next) noexcept;
  void (*wrapNccl)(NcclTable& table, const NcclTable& next) noexcept;
};

// The layers of this process, bottom first. Decided once, from the environment, on the first
// intercepted call (see preload_config.cpp); never changes afterwards.
struct LayerList {
  static constexpr int kMax = 4;
  const Layer* layers[kMax] = {};
  int count = 0;
};
const LayerList& activeLayers() noexcept;

}  // namespace syncopate::preload
