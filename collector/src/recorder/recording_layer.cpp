// The recording layer: a wrapper for every function of the API lists, generated from each
// entry's class and argument roles, and kRecordingLayer, which puts them together with the
// recorder's bounded stop. What the recorder does for each class is in record_call.hpp.
#include "syncopate/collector/recording_layer.hpp"

#include "syncopate/collector/recorder_config.hpp"
#include "recorder/record_call.hpp"

namespace syncopate::preload {
namespace {

constinit const CudartTable* cudartBelow = nullptr;
constinit const DriverTable* driverBelow = nullptr;
constinit const NcclTable* ncclBelow = nullptr;

using trace::ApiDomain;

// The roles are the last, variadic argument, so that they reach the wrapper unexpanded: their
// expansions hold commas.
#include "syncopate/dispatch/call_roles.inc"
#define SYNCOPATE_RECORDING_WRAPPER(domain, below, ret, name, params, args, what, ...)          \
  [[maybe_unused]] ret name params noexcept {                                                     \
    CallFacts facts(CallClass::what, ApiName::name, domain);                                      \
    __VA_ARGS__ return recordCall<CallClass::what>(facts, [&] { return below->name args; });            \
  }
#define SYNCOPATE_CUDART(ret, name, params, args, what, roles) \
  SYNCOPATE_RECORDING_WRAPPER(ApiDomain::CudaRuntime, cudartBelow, ret, name, params, args, what, roles)
#define SYNCOPATE_CUDART_MANUAL SYNCOPATE_CUDART
#include "syncopate/dispatch/cudart_api.inc"
#undef SYNCOPATE_CUDART_MANUAL
#undef SYNCOPATE_CUDART
#define SYNCOPATE_DRIVER(ret, name, params, args, what, roles) \
  SYNCOPATE_RECORDING_WRAPPER(ApiDomain::CudaDriver, driverBelow, ret, name, params, args, what, roles)
#define SYNCOPATE_DRIVER_MANUAL SYNCOPATE_DRIVER
#include "syncopate/dispatch/driver_api.inc"
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER
#define SYNCOPATE_NCCL(ret, name, params, args, what, roles) \
  SYNCOPATE_RECORDING_WRAPPER(ApiDomain::Nccl, ncclBelow, ret, name, params, args, what, roles)
#include "syncopate/dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL
#undef SYNCOPATE_RECORDING_WRAPPER
#include "syncopate/dispatch/call_roles_end.inc"

// Each family's table: the recorder's wrapper where it wraps the class, the entry below else.
#define SYNCOPATE_WRAP_ENTRY(ret, name, params, args, what, roles) \
  if constexpr (recorderWraps(CallClass::what)) table.name = name;

void wrapCudart(CudartTable& table, const CudartTable& below) noexcept {
  cudartBelow = &below;
#define SYNCOPATE_CUDART SYNCOPATE_WRAP_ENTRY
#define SYNCOPATE_CUDART_MANUAL SYNCOPATE_WRAP_ENTRY
#include "syncopate/dispatch/cudart_api.inc"
#undef SYNCOPATE_CUDART_MANUAL
#undef SYNCOPATE_CUDART
}

void wrapDriver(DriverTable& table, const DriverTable& below) noexcept {
  driverBelow = &below;
#define SYNCOPATE_DRIVER SYNCOPATE_WRAP_ENTRY
#define SYNCOPATE_DRIVER_MANUAL SYNCOPATE_WRAP_ENTRY
#include "syncopate/dispatch/driver_api.inc"
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER
}

void wrapNccl(NcclTable& table, const NcclTable& below) noexcept {
  ncclBelow = &below;
#define SYNCOPATE_NCCL SYNCOPATE_WRAP_ENTRY
#include "syncopate/dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL
}
#undef SYNCOPATE_WRAP_ENTRY

LayerStop stopRecordingWithin(std::int64_t limit_ns) noexcept {
  Recorder* recorder = Recorder::current();
  if (recorder == nullptr) return LayerStop::NothingToDo;
  return recorder->shutdownWithin(limit_ns) ? LayerStop::Done : LayerStop::TimedOut;
}

}  // namespace

bool recordingRequested() noexcept { return recorderConfig().enabled; }

const Layer kRecordingLayer{"recorder", wrapCudart, wrapDriver, wrapNccl, stopRecordingWithin};

}  // namespace syncopate::preload
