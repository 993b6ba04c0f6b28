// What the recorder does for each class of call (call_facts.hpp). The generated wrappers of
// recording_layer.cpp describe a call and hand it here with the real call; this is the only
// hand-written part of the recording layer besides NCCL's (nccl_calls.hpp). Calls are always
// made, recorded or not; a call the recorder cannot describe is still made.
#pragma once

#include "common/clock.hpp"
#include "recorder/nccl_calls.hpp"
#include "recorder/op_recording.hpp"
#include "syncopate/dispatch/call_facts.hpp"
#include "syncopate/dispatch/kernel_registry.hpp"

namespace syncopate::preload {

// A call that is only a host call in the store.
template <class Call>
auto recordAsHostCall(const CallFacts& facts, Call&& call) noexcept -> decltype(call()) {
  Recorder* recorder = Recorder::activate();
  if (recorder == nullptr || !recorder->recording()) return call();
  ThreadState* thread = recorder->thread();
  if (thread == nullptr || thread->nccl_depth > 0) return call();
  const std::int64_t start = monotonicNs();
  auto result = call();
  recordHostCall(*recorder, *thread, facts.domain, facts.api, static_cast<std::int32_t>(result), start, monotonicNs());
  return result;
}

// A stream created here is registered with its flags and priority, recording or not: it may
// be used once recording starts.
template <class Call>
auto recordStreamCreation(const CallFacts& facts, Call&& call) noexcept -> decltype(call()) {
  Recorder* recorder = Recorder::activate();
  const std::int64_t start = monotonicNs();
  auto result = call();
  if (recorder == nullptr) return result;
  ThreadState* thread = recorder->thread();
  if (thread == nullptr) return result;
  if (succeeded(result) && facts.created_stream != nullptr) {
    recorder->registerCreatedStream(recorder->currentDevice(*thread), *facts.created_stream, facts.stream_flags,
                                    facts.stream_priority);
  }
  if (recorder->recording()) {
    recordHostCall(*recorder, *thread, facts.domain, facts.api, static_cast<std::int32_t>(result), start, monotonicNs());
  }
  return result;
}

// The thread's current device decides where default-stream work goes: remembered here so the
// hot path never has to ask. A context change may change it: the cached one is forgotten.
// Choosing a device uses CUDA (it makes the device's context current), so it may be what starts
// the recorder: a worker thread's first call is often this one.
template <class Call>
auto recordDeviceChange(const CallFacts& facts, Call&& call) noexcept -> decltype(call()) {
  Recorder* recorder = Recorder::activate();
  const std::int64_t start = monotonicNs();
  auto result = call();
  if (recorder == nullptr) return result;
  ThreadState* thread = recorder->thread();
  if (thread == nullptr) return result;
  if (facts.what == CallClass::ContextSwitch) {
    recorder->forgetCurrentDevice(*thread);
    return result;
  }
  if (succeeded(result)) recorder->setCurrentDevice(*thread, facts.device);
  if (recorder->recording()) {
    recordHostCall(*recorder, *thread, facts.domain, facts.api, static_cast<std::int32_t>(result), start, monotonicNs());
  }
  return result;
}

// cudaDeviceReset destroys the device's context with everything made on it, the events that
// time its ops among them: the ops recorded so far get their times first (the program has
// synchronised with them, so this takes a step of the background thread; at most 2 s), and the
// backend forgets what it made on the device.
template <class Call>
auto recordDeviceReset(const CallFacts& facts, Call&& call) noexcept -> decltype(call()) {
  constexpr std::int64_t kSettleNs = 2'000'000'000;
  Recorder* recorder = Recorder::current();
  ThreadState* thread = recorder != nullptr ? recorder->thread() : nullptr;
  if (thread == nullptr) return call();
  const int device = recorder->currentDevice(*thread);
  recorder->settle(kSettleNs);
  const std::int64_t start = monotonicNs();
  auto result = call();
  if (succeeded(result)) recorder->timing().deviceReset(device);
  if (recorder->recording() && thread->nccl_depth == 0) {
    recordHostCall(*recorder, *thread, facts.domain, facts.api, static_cast<std::int32_t>(result), start, monotonicNs());
  }
  return result;
}

template <class Call>
auto recordAllocation(const CallFacts& facts, Call&& call) noexcept -> decltype(call()) {
  Recorder* recorder = Recorder::activate();
  if (recorder == nullptr || !recorder->recording()) return call();
  ThreadState* thread = recorder->thread();
  if (thread == nullptr || thread->nccl_depth > 0) return call();
  const std::int64_t start = monotonicNs();
  auto result = call();
  const std::int64_t end = monotonicNs();
  recordHostCall(*recorder, *thread, facts.domain, facts.api, static_cast<std::int32_t>(result), start, end);
  if (succeeded(result) && allocatedAddress(facts) != 0) {
    trace::AllocRecord record;
    record.kind = facts.alloc_kind;
    record.device = static_cast<std::int16_t>(facts.on_device ? recorder->currentDevice(*thread) : -1);
    record.address = allocatedAddress(facts);
    record.bytes = allocatedBytes(facts);
    record.time_ns = end;
    trace::Record packed = record;
    recorder->push(*thread, std::span<const trace::Record>(&packed, 1));
  }
  return result;
}

template <class Call>
auto recordRelease(const CallFacts& facts, Call&& call) noexcept -> decltype(call()) {
  Recorder* recorder = Recorder::activate();
  if (recorder == nullptr || !recorder->recording()) return call();
  ThreadState* thread = recorder->thread();
  if (thread == nullptr || thread->nccl_depth > 0) return call();
  const std::int64_t start = monotonicNs();
  auto result = call();
  recordHostCall(*recorder, *thread, facts.domain, facts.api, static_cast<std::int32_t>(result), start, monotonicNs());
  if (succeeded(result) && facts.freed != 0) {
    trace::FreeRecord record;
    record.address = facts.freed;
    record.time_ns = start;
    trace::Record packed = record;
    recorder->push(*thread, std::span<const trace::Record>(&packed, 1));
  }
  return result;
}

// The HostSync op of a host-blocking call.
trace::Record hostSyncOp(Recorder& recorder, ThreadState& thread, const CallFacts& facts, std::uint32_t correlation,
                         std::int64_t start, std::int64_t end) noexcept;

// While any stream captures, ops check whether theirs does before adding timing events (an
// event recorded into a capture would become part of the graph). Counted whether recording or
// not, since recording may start in the middle of a capture.
template <class Call>
auto recordCapture(const CallFacts& facts, Call&& call) noexcept -> decltype(call()) {
  Recorder* recorder = Recorder::activate();
  if (facts.what == CallClass::CaptureBegin) {
    auto result = recordAsHostCall(facts, call);
    if (recorder != nullptr && succeeded(result)) recorder->captureStarted();
    return result;
  }
  const bool was_capturing = recorder != nullptr && recorder->capturing(facts.meantStream());
  auto result = recordAsHostCall(facts, call);
  if (was_capturing) recorder->captureEnded();
  return result;
}

template <class Call>
auto recordGraphLaunch(const CallFacts& facts, Call&& call) noexcept -> decltype(call()) {
  auto result = recordAsHostCall(facts, call);
  if (Recorder* recorder = Recorder::current(); recorder != nullptr && recorder->recording() && succeeded(result)) {
    recorder->counters().graph_launches.fetch_add(1, std::memory_order_relaxed);
  }
  return result;
}

// The recorder's behaviour by class: `what` is the class of the generated wrapper, known at
// compile time, so each wrapper compiles to its own class's path only.
template <CallClass what, class Call>
auto recordCall(CallFacts& facts, Call&& call) noexcept -> decltype(call()) {
  if constexpr (what == CallClass::Launch || what == CallClass::Copy || what == CallClass::Fill) {
    if (facts.passes_through) return call();
    // Not recording (also when it stopped since passesStraightOn() asked): straight on, before
    // anything is copied.
    Recorder* recorder = Recorder::activate();
    if (recorder == nullptr || !recorder->recording()) return call();
    const bool gpu_work = what == CallClass::Launch || facts.bytes > 0;
    const IssueFacts issue = issueFactsOf(facts);
    return recordIssue(*recorder, facts.domain, facts.api, facts.meantStream(), gpu_work,
                       [&issue](Recorder& active, ThreadState& thread) { return issuedOp(active, thread, issue); },
                       call);
  } else if constexpr (what == CallClass::EventRecord || what == CallClass::StreamWait) {
    const trace::OpKind kind = what == CallClass::EventRecord ? trace::OpKind::EventRecord : trace::OpKind::StreamWait;
    return recordMarker(facts.domain, facts.api, kind, facts.meantStream(), facts.event, call);
  } else if constexpr (what == CallClass::StreamSync || what == CallClass::EventSync ||
                       what == CallClass::DeviceSync || what == CallClass::ContextSync) {
    return recordSync(facts.domain, facts.api, call,
                      [&](Recorder& recorder, ThreadState& thread, std::uint32_t correlation, std::int64_t start,
                          std::int64_t end) { return hostSyncOp(recorder, thread, facts, correlation, start, end); });
  } else if constexpr (what == CallClass::StreamCreate) {
    return recordStreamCreation(facts, call);
  } else if constexpr (what == CallClass::StreamDestroy || what == CallClass::Setup) {
    return recordAsHostCall(facts, call);
  } else if constexpr (what == CallClass::SetDevice || what == CallClass::ContextSwitch) {
    return recordDeviceChange(facts, call);
  } else if constexpr (what == CallClass::DeviceReset) {
    return recordDeviceReset(facts, call);
  } else if constexpr (what == CallClass::Alloc) {
    return recordAllocation(facts, call);
  } else if constexpr (what == CallClass::Free) {
    return recordRelease(facts, call);
  } else if constexpr (what == CallClass::CaptureBegin || what == CallClass::CaptureEnd) {
    return recordCapture(facts, call);
  } else if constexpr (what == CallClass::GraphLaunch) {
    return recordGraphLaunch(facts, call);
  } else if constexpr (what == CallClass::CommCreate || what == CallClass::CommDerive) {
    return recordCommCreation(facts, call);
  } else if constexpr (what == CallClass::CommFinalize || what == CallClass::CommDestroy) {
    return recordCommEnd(facts, call);
  } else if constexpr (what == CallClass::Collective) {
    return recordCollective(facts, call);
  } else if constexpr (what == CallClass::GroupStart) {
    return recordGroupStart(facts, call);
  } else if constexpr (what == CallClass::GroupEnd) {
    return recordGroupEnd(facts, call);
  } else {
    // StreamQuery, EventQuery, Lookup: nothing the store keeps.
    return call();
  }
}

// Whether a call goes straight on, before its wrapper describes it: a launch, copy or fill
// while the active recorder is not recording (armed and dormant). Before activation it takes
// the recording path, which activates the recorder.
template <CallClass what>
bool passesStraightOn() noexcept {
  if constexpr (what == CallClass::Launch || what == CallClass::Copy || what == CallClass::Fill) {
    const Recorder* recorder = Recorder::current();
    return recorder != nullptr && !recorder->recording();
  } else {
    return false;
  }
}

// Whether the recorder wraps a class at all (the others keep the table below's entry, so they
// cost nothing).
constexpr bool recorderWraps(CallClass what) noexcept {
  return what != CallClass::StreamQuery && what != CallClass::EventQuery && what != CallClass::Lookup;
}

}  // namespace syncopate::preload
