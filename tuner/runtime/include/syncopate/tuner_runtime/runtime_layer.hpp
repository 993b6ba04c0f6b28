// The tuner's reordering runtime as a layer of the preload library (syncopate/dispatch/layer.hpp):
// present when SYNCOPATE_PLAN names a plan (`syncopate run --plan`), above the recorder, so that
// the recorder records what the runtime really issues.
#pragma once

#include <cstdint>

#include "syncopate/dispatch/layer.hpp"
#include "syncopate/trace/types.hpp"

namespace syncopate::preload {

// True when the environment asks for the runtime (SYNCOPATE_PLAN is set and not empty).
bool tunerRuntimeRequested() noexcept;

extern const Layer kTunerRuntimeLayer;

// The channels the plan gives a collective of this kind and size (nccl-tests' size, as NCCL
// hands its tuner plugin), or 0: NCCL chooses. 0 as well without a usable plan. Called from
// NCCL's launch path through the tuner plugin: no lock, no allocation once the plan is read.
std::uint32_t plannedChannels(trace::CollType collective, std::uint64_t bytes) noexcept;

}  // namespace syncopate::preload
