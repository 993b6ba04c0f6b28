// The recording layer (see dispatch/layer.hpp): one function per API family fills the
// recorder's table over the one below it.
#pragma once

#include "dispatch/layer.hpp"

namespace syncopate::preload {

void wrapCudartForRecording(CudartTable& table, const CudartTable& below) noexcept;
void wrapDriverForRecording(DriverTable& table, const DriverTable& below) noexcept;
void wrapNcclForRecording(NcclTable& table, const NcclTable& below) noexcept;

inline constexpr Layer kRecordingLayer{"recorder", wrapCudartForRecording, wrapDriverForRecording, wrapNcclForRecording};

}  // namespace syncopate::preload
