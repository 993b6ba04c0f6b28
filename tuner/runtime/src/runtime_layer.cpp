// The runtime's layer: a wrapper for every function of the API lists, generated from each
// entry's class and argument roles (syncopate/dispatch/layer_wrappers.inc). A call that can order
// or touch GPU work becomes a tuner::Call for the scheduler (route_call.hpp), with the original
// call kept as a thunk the scheduler can issue, hold or move to another stream. Classes that
// neither order nor touch GPU work (creating streams, allocating, looking up handles) keep the
// entry of the layer below.
#include "syncopate/tuner_runtime/runtime_layer.hpp"

#include <cstdlib>
#include <span>

#include "plan_runtime.hpp"
#include "route_call.hpp"

namespace syncopate::preload {
namespace {

#define SYNCOPATE_LAYER_HANDLE(what) routeCall<CallClass::what>
#define SYNCOPATE_LAYER_NEXT(family) runtimeNext().family
#define SYNCOPATE_LAYER_KEEP_NEXT(family, table) runtimeNext().family = &table
#define SYNCOPATE_LAYER_WRAPS(what) runtimeWraps(what)
#include "syncopate/dispatch/layer_wrappers.inc"

}  // namespace

bool tunerRuntimeRequested() noexcept {
  const char* plan = std::getenv("SYNCOPATE_PLAN");
  return plan != nullptr && *plan != '\0';
}

const Layer kTunerRuntimeLayer{"tuner runtime", wrapCudart, wrapDriver, wrapNccl};

std::uint32_t plannedChannels(trace::CollType collective, std::uint64_t bytes) noexcept {
  // The environment is read once: NCCL asks for every collective it launches.
  static const bool requested = tunerRuntimeRequested();
  if (!requested) return 0;
  // The plan's rules, read once (the plan no longer changes once read).
  static const std::span<const tuner::ChannelRule> rules = PlanRuntime::instance().channelRules();
  return tuner::channelsFor(rules, collective, bytes);
}

}  // namespace syncopate::preload
