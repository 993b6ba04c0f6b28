// What the recorder does for NCCL's classes of calls: communicator creation (tracked always, see
// nccl_comms.hpp), every collective and send/recv with its communicator, sequence number,
// operation, type, count, root or peer and group, and the GPU time of the work it launched.
// Inside ncclGroupStart/End the work is launched by ncclGroupEnd: the calls' records wait for
// it, and their GPU time is that of the group's launch on their stream.
#pragma once

#include "common/clock.hpp"
#include "recorder/nccl_comms.hpp"
#include "recorder/op_recording.hpp"
#include "syncopate/dispatch/call_facts.hpp"

namespace syncopate::preload {

inline bool ncclIssued(ncclResult_t result) noexcept { return result == ncclSuccess || result == ncclInProgress; }

// Registers the communicators a successful creating call made (`start`: when the call began);
// inside a group on `thread`, once the group has ended (registerGroupComms).
void registerCreatedComms(const CallFacts& facts, ThreadState* thread, std::int64_t start) noexcept;
// At the end of the thread's outermost group: registers the communicators made inside it (none
// when the group failed).
void registerGroupComms(ThreadState& thread, ncclResult_t result) noexcept;

// Runs a communicator-creating call; on success registers the new communicators, and records
// the call when recording. The NCCL call's own CUDA calls belong to it (nccl_depth).
template <class Call>
ncclResult_t recordCommCreation(const CallFacts& facts, Call&& call) noexcept {
  Recorder* recorder = Recorder::activate();
  const std::int64_t start = monotonicNs();
  ThreadState* thread = recorder != nullptr ? recorder->thread() : nullptr;
  if (thread != nullptr) ++thread->nccl_depth;
  const ncclResult_t result = call();
  if (thread != nullptr) --thread->nccl_depth;
  const std::int64_t end = monotonicNs();
  // A non-blocking communicator is still initialising (ncclInProgress), but its handle is set.
  if (ncclIssued(result)) registerCreatedComms(facts, thread, start);
  if (recorder != nullptr && thread != nullptr && recorder->recording()) {
    recordHostCall(*recorder, *thread, facts.domain, facts.api, result, start, end);
  }
  return result;
}

// ncclCommFinalize keeps the communicator (destroy follows); destroy and abort forget it.
template <class Call>
ncclResult_t recordCommEnd(const CallFacts& facts, Call&& call) noexcept {
  Recorder* recorder = Recorder::activate();
  const std::int64_t start = monotonicNs();
  ThreadState* thread = recorder != nullptr ? recorder->thread() : nullptr;
  if (thread != nullptr) ++thread->nccl_depth;
  const ncclResult_t result = call();
  if (thread != nullptr) --thread->nccl_depth;
  if (facts.what == CallClass::CommDestroy) commRegistry().remove(facts.comm);
  if (recorder != nullptr && thread != nullptr && recorder->recording()) {
    recordHostCall(*recorder, *thread, facts.domain, facts.api, result, start, monotonicNs());
  }
  return result;
}

// A collective under way, between its call's start and its end.
struct CollectiveIssue {
  Recorder* recorder = nullptr;
  ThreadState* thread = nullptr;
  CommState* comm = nullptr;
  std::uint64_t seq = 0;
  std::uint32_t correlation = 0;
  int device = 0;
  bool grouped = false;
  bool captured = false;
  Ticket ticket = kNoTicket;
  std::int64_t start = 0;
};

// Before the call: counts it on its communicator (on every call, recorded or not: the numbers
// must agree across ranks) and, when recording, opens its timing bracket. False when the call
// is not recorded.
bool beginCollective(const CallFacts& facts, CollectiveIssue& issue) noexcept;
// After it: closes the bracket and pushes its records (or keeps them for ncclGroupEnd).
void endCollective(const CallFacts& facts, CollectiveIssue& issue, ncclResult_t result) noexcept;

template <class Call>
ncclResult_t recordCollective(const CallFacts& facts, Call&& call) noexcept {
  CollectiveIssue issue;
  if (!beginCollective(facts, issue)) {
    if (issue.thread != nullptr) ++issue.thread->nccl_depth;
    const ncclResult_t result = call();
    if (issue.thread != nullptr) --issue.thread->nccl_depth;
    return result;
  }
  ++issue.thread->nccl_depth;
  issue.thread->nccl_call_correlation = issue.captured ? 0 : issue.correlation;  // a captured call gets no rows to join
  const ncclResult_t result = call();
  issue.thread->nccl_call_correlation = 0;
  --issue.thread->nccl_depth;
  endCollective(facts, issue, result);
  return result;
}

// Opens a group on the calling thread (a nested one joins the outer group).
void groupStarted(ThreadState& thread, ncclResult_t result) noexcept;

template <class Call>
ncclResult_t recordGroupStart(const CallFacts& facts, Call&& call) noexcept {
  Recorder* recorder = Recorder::activate();
  ThreadState* thread = recorder != nullptr ? recorder->thread() : nullptr;
  if (thread == nullptr) return call();
  const std::int64_t start = monotonicNs();
  const ncclResult_t result = call();
  groupStarted(*thread, result);
  if (recorder->recording() && thread->nccl_depth == 0) {
    recordHostCall(*recorder, *thread, facts.domain, facts.api, result, start, monotonicNs());
  }
  return result;
}

// The outermost ncclGroupEnd launches the group's GPU work: one timing bracket per stream the
// group's calls use, shared by those calls.
struct GroupLaunch {
  static constexpr int kMaxBrackets = 32;
  struct Bracket {
    cudaStream_t stream;
    Ticket ticket;
  };
  Bracket brackets[kMaxBrackets];
  int bracket_count = 0;
  Ticket op_ticket[kMaxGroupOps];
  int count = 0;
  std::uint32_t correlation = 0;
  std::int64_t start = 0;
};

void beginGroupLaunch(Recorder& recorder, ThreadState& thread, GroupLaunch& launch) noexcept;
void endGroupLaunch(Recorder& recorder, ThreadState& thread, const CallFacts& facts, GroupLaunch& launch,
                    ncclResult_t result) noexcept;

template <class Call>
ncclResult_t recordGroupEnd(const CallFacts& facts, Call&& call) noexcept {
  Recorder* recorder = Recorder::activate();
  ThreadState* thread = recorder != nullptr ? recorder->thread() : nullptr;
  if (thread == nullptr || thread->group_depth == 0) return call();
  ncclResult_t result;
  if (--thread->group_depth > 0 || thread->group_count == 0 || !recorder->recording()) {
    const std::int64_t start = monotonicNs();
    result = call();
    if (thread->group_depth == 0) thread->group_count = 0;
    if (recorder->recording() && thread->nccl_depth == 0) {
      recordHostCall(*recorder, *thread, facts.domain, facts.api, result, start, monotonicNs());
    }
  } else {
    GroupLaunch launch;
    beginGroupLaunch(*recorder, *thread, launch);
    ++thread->nccl_depth;
    result = call();
    --thread->nccl_depth;
    endGroupLaunch(*recorder, *thread, facts, launch, result);
  }
  if (thread->group_depth == 0 && !thread->group_comms.empty()) registerGroupComms(*thread, result);
  return result;
}

}  // namespace syncopate::preload
