// The recorder as a layer of the preload library (syncopate/dispatch/layer.hpp): the bottom
// layer, so that it records what really reaches the libraries. preload/ stacks it when the
// environment asks for a recording.
#pragma once

#include "syncopate/dispatch/layer.hpp"

namespace syncopate::preload {

// True when the environment that `syncopate record` or `syncopate run` prepared asks this
// process to be recorded (SYNCOPATE_OUTPUT_DIR is set).
bool recordingRequested() noexcept;

// Its table wrappers, one per API family, and its bounded stop: drain the threads' rings into
// the store and close it, without waiting on GPU work that may be hung for more than half the
// limit (what has not completed is counted in `ops_untimed_timing_failed`).
extern const Layer kRecordingLayer;

}  // namespace syncopate::preload
