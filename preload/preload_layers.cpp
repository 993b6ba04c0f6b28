// Which layers this process stacks over the real libraries, decided once from the environment.
// The recorder is the bottom layer, so that it records what really reaches the libraries; a
// layer that reorders or redirects calls (the tuner's runtime) goes above it.
#include "syncopate/collector/recording_layer.hpp"
#include "syncopate/dispatch/layer.hpp"
#include "syncopate/tuner_runtime/runtime_layer.hpp"

namespace syncopate::preload {

const LayerList& activeLayers() noexcept {
  static const LayerList list = [] {
    LayerList layers;
    if (recordingRequested()) layers.layers[layers.count++] = &kRecordingLayer;
    if (tunerRuntimeRequested()) layers.layers[layers.count++] = &kTunerRuntimeLayer;
    return layers;
  }();
  return list;
}

}  // namespace syncopate::preload
