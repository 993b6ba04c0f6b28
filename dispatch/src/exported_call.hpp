// The body of an exported symbol: the call goes to the top of its family's chain. Calls that
// allocate or free memory also keep the map of the process's device memory
// (syncopate/dispatch/device_memory.hpp) here, below every layer, so that the map is complete
// whichever layers a process stacks and whether or not anything is recording.
#pragma once

#include "syncopate/dispatch/call_facts.hpp"
#include "syncopate/dispatch/device_memory.hpp"

namespace syncopate::preload {

constexpr bool changesMemory(CallClass what) noexcept { return what == CallClass::Alloc || what == CallClass::Free; }

template <class Call>
auto callKeepingMemoryMap(const CallFacts& facts, Call&& call) noexcept -> decltype(call()) {
  if (facts.what == CallClass::Free) {
    // Forgotten first: once the free returns, another thread may be handed the address anew.
    // A free that fails leaves the memory allocated, so it is remembered again.
    const std::uint64_t bytes = deviceMemory().remove(facts.freed);
    auto result = call();
    if (!succeeded(result) && bytes != 0) deviceMemory().add(facts.freed, bytes);
    return result;
  }
  auto result = call();
  if (succeeded(result)) deviceMemory().add(allocatedAddress(facts), allocatedBytes(facts));
  return result;
}

}  // namespace syncopate::preload

// Inside an exported function, where its parameters are in scope; `...` are the entry's roles
// (call_roles.inc), expanded only for the calls that change memory.
#define SYNCOPATE_EXPORTED_CALL(domain, top, name, args, what, ...)                                     \
  if constexpr (::syncopate::preload::changesMemory(::syncopate::preload::CallClass::what)) {           \
    ::syncopate::preload::CallFacts facts(::syncopate::preload::CallClass::what,                        \
                                          ::syncopate::preload::ApiName::name, domain);                 \
    __VA_ARGS__ return ::syncopate::preload::callKeepingMemoryMap(facts, [&] { return top.name args; }); \
  } else {                                                                                              \
    return top.name args;                                                                               \
  }
