// The tuner's reordering runtime as a layer of the preload library (syncopate/dispatch/layer.hpp):
// present when SYNCOPATE_PLAN names a plan (`syncopate run --plan`), above the recorder, so that
// the recorder records what the runtime really issues.
#pragma once

#include "syncopate/dispatch/layer.hpp"

namespace syncopate::preload {

// True when the environment asks for the runtime (SYNCOPATE_PLAN is set and not empty).
bool tunerRuntimeRequested() noexcept;

extern const Layer kTunerRuntimeLayer;

}  // namespace syncopate::preload
