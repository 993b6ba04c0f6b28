// What the runtime does for each class of call (syncopate/dispatch/call_facts.hpp): the call
// becomes a tuner::Call for the scheduler, the one vocabulary the what-if model speaks too.
// Where the runtime cannot prove what a call touches, the call is a barrier:
//  - a kernel whose parameter buffer cannot be read, or that refers to more addresses than
//    followed (unknown_pointers);
//  - a copy with a side it does not follow: a device variable (symbol), another device's
//    memory (peer copies), or a copy ordered against the whole device (cudaMemcpyPeer);
//  - a stream-ordered free and a graph launch, on their stream.
// Freeing memory outside a stream waits for the whole device first, as CUDA does.
#pragma once

#include "plan_runtime.hpp"
#include "syncopate/dispatch/call_facts.hpp"
#include "syncopate/dispatch/launch_touches.hpp"

namespace syncopate::preload {

// Room for a call's touches on the stack of the intercepted function, left uninitialised: only
// the first `call.touches.size()` are written or read. A launch reports at most
// kMaxLaunchTouches; a copy or fill two.
struct TouchBuffer {
  TouchBuffer() noexcept {}
  union {
    tuner::Touch touches[kMaxLaunchTouches];
  };
};

// The stream a call means. Stream 0 is the legacy default stream, or, through a per-thread
// entry point (_ptsz/_ptds), the thread's default stream.
tuner::StreamHandle streamOf(const CallFacts& facts) noexcept;

tuner::Call makeCall(tuner::CallKind kind, tuner::StreamHandle stream) noexcept;

// The touches of a launch (launch_touches.hpp) or of a copy or fill (its ranges on the device
// side), into `buffer`.
void describeLaunch(tuner::Call& call, const CallFacts& facts, TouchBuffer& buffer) noexcept;
void describeRanges(tuner::Call& call, const CallFacts& facts, TouchBuffer& buffer) noexcept;

// A copy the runtime does not follow (see above).
bool copyIsBarrier(const CallFacts& facts) noexcept;

// The collective's arguments as the scheduler knows them.
void describeCollective(tuner::Call& call, const CallFacts& facts, PlanRuntime& runtime) noexcept;
// Whether work on `stream` synchronises with the legacy default stream (cudaStreamGetFlags;
// taken as so when CUDA cannot say).
bool blockingStream(cudaStream_t stream) noexcept;

// A communicator was made: known to the runtime (with its twin).
void noteCreatedComms(const CallFacts& facts) noexcept;

// Hands `call` to the runtime when there is one for this thread, else makes it directly.
// `original(target)` makes the application's call, on `target` when the scheduler moves it.
template <class F>
auto route(const tuner::Call& call, F&& original) -> decltype(original(tuner::StreamHandle{})) {
  using R = decltype(original(tuner::StreamHandle{}));
  PlanRuntime* rt = PlanRuntime::forCall();
  if (rt == nullptr) return original(call.stream);
  auto thunk = [&](tuner::StreamHandle target) -> int { return static_cast<int>(original(target)); };
  const PlanRuntime::Original ref(thunk);
  return static_cast<R>(rt->run(call, ref));
}

template <class Call>
auto routeAs(tuner::CallKind kind, const CallFacts& facts, tuner::StreamHandle stream, Call&& call)
    -> decltype(call()) {
  tuner::Call c = makeCall(kind, stream);
  c.event = facts.event;
  return route(c, [&](tuner::StreamHandle) { return call(); });
}

template <tuner::CallKind kind, class Call>
auto routeTouching(CallFacts& facts, Call&& call) -> decltype(call()) {
  TouchBuffer touches;
  tuner::Call c = makeCall(kind, streamOf(facts));
  if constexpr (kind == tuner::CallKind::Kernel) {
    describeLaunch(c, facts, touches);
  } else {
    describeRanges(c, facts, touches);
  }
  return route(c, [&](tuner::StreamHandle) { return call(); });
}

template <CallClass what, class Call>
auto routeCall(CallFacts& facts, Call&& call) noexcept -> decltype(call()) {
  using tuner::CallKind;
  if constexpr (what == CallClass::Launch) {
    if (facts.passes_through || PlanRuntime::forCall() == nullptr) return call();
    return routeTouching<CallKind::Kernel>(facts, call);
  } else if constexpr (what == CallClass::Copy) {
    if (copyIsBarrier(facts)) return routeAs(CallKind::Barrier, facts, streamOf(facts), call);
    return routeTouching<CallKind::Memcpy>(facts, call);
  } else if constexpr (what == CallClass::Fill) {
    return routeTouching<CallKind::Memset>(facts, call);
  } else if constexpr (what == CallClass::EventRecord) {
    // The application's event may be recorded on another stream (the join stream) instead.
    tuner::Call c = makeCall(CallKind::EventRecord, streamOf(facts));
    c.event = facts.event;
    return route(c, [&](tuner::StreamHandle target) {
      if (target != c.stream) *facts.stream_slot = reinterpret_cast<cudaStream_t>(target);
      return call();
    });
  } else if constexpr (what == CallClass::StreamWait) {
    return routeAs(CallKind::StreamWait, facts, streamOf(facts), call);
  } else if constexpr (what == CallClass::StreamSync) {
    return routeAs(CallKind::StreamSync, facts, streamOf(facts), call);
  } else if constexpr (what == CallClass::EventSync) {
    return routeAs(CallKind::EventSync, facts, tuner::kLegacyStream, call);
  } else if constexpr (what == CallClass::DeviceSync || what == CallClass::ContextSync ||
                       what == CallClass::DeviceReset) {
    return routeAs(CallKind::DeviceSync, facts, tuner::kLegacyStream, call);
  } else if constexpr (what == CallClass::StreamQuery) {
    return routeAs(CallKind::StreamQuery, facts, streamOf(facts), call);
  } else if constexpr (what == CallClass::EventQuery) {
    return routeAs(CallKind::EventQuery, facts, tuner::kLegacyStream, call);
  } else if constexpr (what == CallClass::Free) {
    if (facts.device_wide) return routeAs(CallKind::DeviceSync, facts, tuner::kLegacyStream, call);
    return routeAs(CallKind::Barrier, facts, streamOf(facts), call);
  } else if constexpr (what == CallClass::GraphLaunch) {
    return routeAs(CallKind::Barrier, facts, streamOf(facts), call);
  } else if constexpr (what == CallClass::CaptureBegin) {
    return routeAs(CallKind::CaptureBegin, facts, streamOf(facts), call);
  } else if constexpr (what == CallClass::CaptureEnd) {
    return routeAs(CallKind::CaptureEnd, facts, streamOf(facts), call);
  } else if constexpr (what == CallClass::SetDevice) {
    // Another device stops the plan before the switch (a switch that then fails too: stopping
    // is always safe), so that what it holds is issued with the device it belongs to current.
    if (PlanRuntime* rt = PlanRuntime::forCall()) rt->selectingDevice(facts.device);
    return call();
  } else if constexpr (what == CallClass::Collective) {
    // A failure of something the runtime issued earlier for the application is reported by this call.
    PlanRuntime* rt = PlanRuntime::forCall();
    if (rt == nullptr) return call();
    tuner::Call c = makeCall(CallKind::Collective, streamOf(facts));
    describeCollective(c, facts, *rt);
    c.blocking_stream = blockingStream(facts.stream);
    auto thunk = [&](tuner::StreamHandle) -> int { return static_cast<int>(call()); };
    const auto result = static_cast<ncclResult_t>(rt->run(c, PlanRuntime::Original(thunk)));
    return result != ncclSuccess ? result : rt->stickyError();
  } else if constexpr (what == CallClass::GroupStart) {
    return routeAs(CallKind::GroupBegin, facts, tuner::kLegacyStream, call);
  } else if constexpr (what == CallClass::GroupEnd) {
    return routeAs(CallKind::GroupEnd, facts, tuner::kLegacyStream, call);
  } else if constexpr (what == CallClass::CommFinalize || what == CallClass::CommDestroy) {
    // Retired once the scheduler has issued what it held on it, before NCCL frees it.
    return routeAs(CallKind::CommEnd, facts, tuner::kLegacyStream, [&] {
      PlanRuntime::instance().communicatorEnding(facts.comm, facts.api == ApiName::ncclCommAbort);
      return call();
    });
  } else if constexpr (what == CallClass::CommCreate || what == CallClass::CommDerive) {
    const auto result = call();
    if (result == ncclSuccess) noteCreatedComms(facts);
    return result;
  } else {
    return call();
  }
}

// Whether the runtime wraps a class at all: streams, events and memory coming and going,
// context switches, look-ups and set-up (graphs built, pools configured, managed memory's
// pages placed) neither touch the program's data nor order what it waits for.
constexpr bool runtimeWraps(CallClass what) noexcept {
  return what != CallClass::StreamCreate && what != CallClass::StreamDestroy && what != CallClass::Alloc &&
         what != CallClass::ContextSwitch && what != CallClass::Lookup && what != CallClass::Setup;
}

}  // namespace syncopate::preload
