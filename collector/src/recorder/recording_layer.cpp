// The recording layer: a wrapper for every function of the API lists, generated from each
// entry's class and argument roles (syncopate/dispatch/layer_wrappers.inc), and kRecordingLayer,
// which puts them together with the recorder's bounded stop. What the recorder does for each
// class is in record_call.hpp.
#include "syncopate/collector/recording_layer.hpp"

#include "syncopate/collector/recorder_config.hpp"
#include "recorder/record_call.hpp"

namespace syncopate::preload {
namespace {

constinit const CudartTable* cudartBelow = nullptr;
constinit const DriverTable* driverBelow = nullptr;
constinit const NcclTable* ncclBelow = nullptr;

#define SYNCOPATE_LAYER_HANDLE(what) recordCall<CallClass::what>
#define SYNCOPATE_LAYER_NEXT(family) family##Below
#define SYNCOPATE_LAYER_KEEP_NEXT(family, table) family##Below = &table
#define SYNCOPATE_LAYER_WRAPS(what) recorderWraps(what)
#define SYNCOPATE_LAYER_PASSES(what) passesStraightOn<CallClass::what>()
#include "syncopate/dispatch/layer_wrappers.inc"

LayerStop stopRecordingWithin(std::int64_t limit_ns) noexcept {
  Recorder* recorder = Recorder::current();
  if (recorder == nullptr) return LayerStop::NothingToDo;
  return recorder->shutdownWithin(limit_ns) ? LayerStop::Done : LayerStop::TimedOut;
}

}  // namespace

bool recordingRequested() noexcept { return recorderConfig().enabled; }

const Layer kRecordingLayer{"recorder", wrapCudart, wrapDriver, wrapNccl, stopRecordingWithin};

}  // namespace syncopate::preload
