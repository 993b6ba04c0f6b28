// A layer's request that the others finish before it ends the process (layer.hpp).
#include <time.h>

#include "syncopate/dispatch/layer.hpp"

namespace syncopate::preload {
namespace {

std::int64_t monotonicNow() noexcept {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

}  // namespace

LayerStop stopOtherLayersWithin(const Layer& caller, std::int64_t limit_ns) noexcept {
  const std::int64_t deadline = monotonicNow() + limit_ns;
  LayerStop outcome = LayerStop::NothingToDo;
  const LayerList& layers = activeLayers();
  for (int i = 0; i < layers.count; ++i) {
    const Layer* layer = layers.layers[i];
    if (layer == &caller || layer->stopWithin == nullptr) continue;
    const std::int64_t left = deadline - monotonicNow();
    const LayerStop stopped = left > 0 ? layer->stopWithin(left) : LayerStop::TimedOut;
    if (stopped == LayerStop::TimedOut) {
      outcome = LayerStop::TimedOut;
    } else if (stopped == LayerStop::Done && outcome == LayerStop::NothingToDo) {
      outcome = LayerStop::Done;
    }
  }
  return outcome;
}

}  // namespace syncopate::preload
