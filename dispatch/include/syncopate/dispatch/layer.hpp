// A layer is one stage between the application and the real CUDA/NCCL libraries. The chain of
// a family is built once, when its real library is first found: bottom (real) -> layers in
// registration order -> the exported symbols. To build its table a layer receives a copy of the
// table below it, replaces the entries it wants to see, and keeps `next` (which lives for the
// rest of the process) to call on. A layer's functions must never throw and must call `next`
// for the call to happen at all; that is how a layer can also defer or redirect a call.
//
// Layers know each other only through this interface: the recorder (collector/) and the
// reordering runtime (tuner/) are both layers, and preload/ decides which are active.
#pragma once

#include <cstdint>

#include "syncopate/dispatch/tables.hpp"

namespace syncopate::preload {

// What a layer's bounded stop achieved.
enum class LayerStop : std::uint8_t {
  NothingToDo,  // the layer had nothing that must outlive the process (a recorder not recording)
  Done,         // everything it had to finish is finished (the recorder: its store is closed)
  TimedOut,     // the limit passed first: what it had not finished is lost
};

struct Layer {
  const char* name;
  // Each may be null when the layer does not look at that family.
  void (*wrapCudart)(CudartTable& table, const CudartTable& next) noexcept;
  void (*wrapDriver)(DriverTable& table, const DriverTable& next) noexcept;
  void (*wrapNccl)(NcclTable& table, const NcclTable& next) noexcept;
  // Finishes, within `limit_ns`, what must survive the process when another layer is about to
  // end it with `_Exit` (which skips exit handlers): the recorder drains its rings and closes its
  // store. Safe from any thread, and while the layer's own exit handler runs. Null: nothing to do.
  LayerStop (*stopWithin)(std::int64_t limit_ns) noexcept = nullptr;
};

// The layers of this process, bottom first. Decided once, from the environment, on the first
// intercepted call (preload/preload_layers.cpp defines it); never changes afterwards.
struct LayerList {
  static constexpr int kMax = 4;
  const Layer* layers[kMax] = {};
  int count = 0;
};
const LayerList& activeLayers() noexcept;

// Asks every active layer other than `caller` for its bounded stop, bottom first, within
// `limit_ns` in all: TimedOut if any timed out, else Done if any had something to finish.
// What a layer calls before it ends the process with `_Exit`. Not for the hot path.
LayerStop stopOtherLayersWithin(const Layer& caller, std::int64_t limit_ns) noexcept;

}  // namespace syncopate::preload
