// The runtime's layer: a wrapper for every function of the API lists, generated from each
// entry's class and argument roles (syncopate/dispatch/call_facts.hpp). A call that can order
// or touch GPU work becomes a tuner::Call for the scheduler (route_call.hpp), with the original
// call kept as a thunk the scheduler can issue, hold or move to another stream. Classes that
// neither order nor touch GPU work (creating streams, allocating, looking up handles) keep the
// entry of the layer below.
#include "syncopate/tuner_runtime/runtime_layer.hpp"

#include <cstdlib>

#include "plan_runtime.hpp"
#include "route_call.hpp"

namespace syncopate::preload {
namespace {

using trace::ApiDomain;

// The roles are the last, variadic argument, so that they reach the wrapper unexpanded: their
// expansions hold commas.
#include "syncopate/dispatch/call_roles.inc"
#define SYNCOPATE_RUNTIME_WRAPPER(domain, family, ret, name, params, args, what, ...)          \
  [[maybe_unused]] ret name params noexcept {                                                    \
    CallFacts facts(CallClass::what, ApiName::name, domain);                                     \
    __VA_ARGS__ return routeCall<CallClass::what>(facts, [&] { return runtimeNext().family->name args; }); \
  }
#define SYNCOPATE_CUDART(ret, name, params, args, what, roles) \
  SYNCOPATE_RUNTIME_WRAPPER(ApiDomain::CudaRuntime, cudart, ret, name, params, args, what, roles)
#define SYNCOPATE_CUDART_MANUAL SYNCOPATE_CUDART
#include "syncopate/dispatch/cudart_api.inc"
#undef SYNCOPATE_CUDART_MANUAL
#undef SYNCOPATE_CUDART
#define SYNCOPATE_DRIVER(ret, name, params, args, what, roles) \
  SYNCOPATE_RUNTIME_WRAPPER(ApiDomain::CudaDriver, driver, ret, name, params, args, what, roles)
#define SYNCOPATE_DRIVER_MANUAL SYNCOPATE_DRIVER
#include "syncopate/dispatch/driver_api.inc"
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER
#define SYNCOPATE_NCCL(ret, name, params, args, what, roles) \
  SYNCOPATE_RUNTIME_WRAPPER(ApiDomain::Nccl, nccl, ret, name, params, args, what, roles)
#include "syncopate/dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL
#undef SYNCOPATE_RUNTIME_WRAPPER
#include "syncopate/dispatch/call_roles_end.inc"

#define SYNCOPATE_WRAP_ENTRY(ret, name, params, args, what, roles) \
  if constexpr (runtimeWraps(CallClass::what)) table.name = name;

void wrapCudart(CudartTable& table, const CudartTable& next) noexcept {
  runtimeNext().cudart = &next;
#define SYNCOPATE_CUDART SYNCOPATE_WRAP_ENTRY
#define SYNCOPATE_CUDART_MANUAL SYNCOPATE_WRAP_ENTRY
#include "syncopate/dispatch/cudart_api.inc"
#undef SYNCOPATE_CUDART_MANUAL
#undef SYNCOPATE_CUDART
}

void wrapDriver(DriverTable& table, const DriverTable& next) noexcept {
  runtimeNext().driver = &next;
#define SYNCOPATE_DRIVER SYNCOPATE_WRAP_ENTRY
#define SYNCOPATE_DRIVER_MANUAL SYNCOPATE_WRAP_ENTRY
#include "syncopate/dispatch/driver_api.inc"
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER
}

void wrapNccl(NcclTable& table, const NcclTable& next) noexcept {
  runtimeNext().nccl = &next;
#define SYNCOPATE_NCCL SYNCOPATE_WRAP_ENTRY
#include "syncopate/dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL
}
#undef SYNCOPATE_WRAP_ENTRY

}  // namespace

bool tunerRuntimeRequested() noexcept {
  const char* plan = std::getenv("SYNCOPATE_PLAN");
  return plan != nullptr && *plan != '\0';
}

const Layer kTunerRuntimeLayer{"tuner runtime", wrapCudart, wrapDriver, wrapNccl};

}  // namespace syncopate::preload
