// What the scheduler asks for. The reordering runtime implements it with real CUDA and NCCL
// calls; the what-if model implements it by building the simulated schedule; tests implement
// it by writing the actions down.
//
// Contract: every method is called on the thread that made the application's call, in the
// order the actions must be issued. Methods the scheduler calls per intercepted call
// (passthrough, recordEvent, waitEvent) must not allocate, lock or make system calls beyond
// the CUDA/NCCL call they stand for. Nothing here throws.
#pragma once

#include <cstdint>
#include <span>

#include "syncopate/tuner/calls.hpp"

namespace syncopate::tuner {

// An event owned by the scheduler (producer, position, join and unit-done events), numbered
// from 0 up to the capacity the scheduler announced with prepareEvents().
using EventSlot = std::uint32_t;

// A collective the scheduler held and now issues: the application's arguments and stream.
struct HeldCollective {
  CollectiveArgs args;
  StreamHandle stream = kLegacyStream;
  std::uint32_t call_id = 0;  // Call::id of the application's call
};

// One issued part of a bucket: elements [offset, offset + count) of the concatenation of the
// members' buffers, reduced by one NCCL call on `stream`. When the members are contiguous
// (each member's send and receive ranges follow the previous member's) the call works on the
// buffers in place; otherwise the executor copies through a fusion buffer.
// A bucket of several reduce-scatters or all-gathers (one part: offset 0, count the sum of the
// members' per-rank counts) is never contiguous: the executor lays the fusion buffer out rank
// by rank, each rank's slices of the members side by side, so that one call of `count`
// elements per rank does what the members' calls did (sharded_fusion.hpp).
struct UnitIssue {
  std::span<const HeldCollective> members;  // the bucket's members, in the application's order
  std::uint64_t offset = 0, count = 0;      // elements
  bool contiguous = false;
  StreamHandle stream = kLegacyStream;
  std::uint64_t sequence = 0;               // units issued before it by this scheduler
};

// Why the scheduler fell back to the original order somewhere (one sentence each in
// docs/tuner.md; the runtime prints them once per cause and object).
enum class Fallback : std::uint8_t {
  UnknownParameterLayout = 0,  // a kernel whose pointer parameters are not known
  UnknownApi = 1,              // a call the runtime cannot reason about
  GraphCapture = 2,            // work captured into a CUDA graph is not reordered
  LegacyStream = 3,            // an op on the legacy default stream synchronises everything
  OverlappingBuffer = 4,       // a collective's send and receive buffers partly overlap: plan disabled
  RanksDisagree = 5,           // ranks reached a flush with different groups: plan disabled
  UnplannedGroup = 6,          // a group whose signature the plan does not know: original order
  CapacityExceeded = 7,        // more streams/events/tensors than the runtime tracks: plan disabled
  NcclGroup = 8,               // calls inside ncclGroupStart/End keep their order
  MultipleDevices = 9,         // the process uses a second device: plan disabled
  PlanUnusable = 10,           // the plan could not be read or cannot be applied: never enabled
};
inline constexpr int kFallbackCount = 11;
std::string_view toString(Fallback f);
std::string_view describe(Fallback f);  // the sentence

class Executor {
 public:
  virtual ~Executor() = default;

  // --- set-up (called once, or on first sight of a tensor; may allocate) ---
  // Creates event slots [0, count). False: the scheduler disables itself (CapacityExceeded).
  virtual bool prepareEvents(std::uint32_t count) = 0;
  // The runtime's communication stream and join stream.
  virtual StreamHandle communicationStream() = 0;
  virtual StreamHandle joinStream() = 0;

  // --- per call ---
  // Issues the application's call as it was made.
  virtual void passthrough(const Call& call) = 0;
  // Issues the application's event record on another stream (the join stream).
  virtual void recordApplicationEvent(const Call& call, StreamHandle stream) = 0;
  // A held collective issued as the application made it, on its own stream.
  virtual void issueHeld(const HeldCollective& held) = 0;
  virtual void recordEvent(EventSlot event, StreamHandle stream) = 0;
  virtual void waitEvent(StreamHandle stream, EventSlot event) = 0;
  virtual void hostWait(EventSlot event) = 0;
  // The application's stream query, answering "not ready" while `also` has not completed
  // (work redirected from that stream that the query must cover).
  virtual void queryWith(const Call& call, EventSlot also) = 0;

  // --- per flush ---
  virtual void issueUnit(const UnitIssue& unit) = 0;
  // Called at every flush, before the group is issued. With `across_ranks`: true if every rank
  // passed the same digest (a host barrier across the ranks of the group's communicators).
  // Without: the group keeps the program's order of NCCL calls, so no rank needs another's
  // word, and the answer is true.
  virtual bool agree(std::uint64_t digest, std::span<const HeldCollective> group, bool across_ranks) = 0;
  virtual void fallback(Fallback why, const Call& call) = 0;
};

}  // namespace syncopate::tuner
