// Turns the scheduler's actions for every rank into one simulated program: the Executor of
// the what-if model.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "syncopate/tuner/executor.hpp"
#include "syncopate/tuner/simulator.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace syncopate::tuner {

// What all ranks' builders share: the program and the matching of collectives across ranks.
struct ProgramContext {
  SimProgram program;
  // (comm, the recorded call's sequence number, the element offset of a unit) -> match
  std::map<std::tuple<std::int64_t, std::int64_t, std::uint64_t>, std::uint32_t> matches;
  std::vector<std::uint32_t> match_participants;  // per match: ops created
  std::vector<std::int32_t> match_expected;       // per match: ranks of its communicator
  // The recorded sequence number of a flush's first held collective -> its agreement's barrier:
  // the same on every rank, as matches are.
  std::map<std::int64_t, std::uint32_t> barriers;
  bool delayed = false;
  const std::vector<ChannelRule>* channels = nullptr;  // the plan's channel counts; null: as recorded
};

class ProgramBuilder : public Executor {
 public:
  ProgramBuilder(const WhatIfModel& model, ProgramContext& ctx, std::uint32_t rank);

  // Feed one recorded call: `simulate` says whether it lies in the simulated window; `host`:
  // the simulated host thread that makes it (the rank's own index, unless the replay gives
  // each thread of an imported trace its own).
  void beginCall(const RecordedCall& call, bool simulate, double cpu_before_ns, std::uint32_t host);
  void endCall(double cpu_after_ns);

  std::array<std::uint64_t, kFallbackCount> fallbacks{};

  // Executor
  bool prepareEvents(std::uint32_t count) override;
  StreamHandle communicationStream() override { return kModelCommunicationStream; }
  StreamHandle joinStream() override { return kModelJoinStream; }
  void passthrough(const Call& call) override;
  void recordApplicationEvent(const Call& call, StreamHandle stream) override;
  void issueHeld(const HeldCollective& held) override;
  void recordEvent(EventSlot event, StreamHandle stream) override;
  void waitEvent(StreamHandle stream, EventSlot event) override;
  void hostWait(EventSlot event) override;
  void queryWith(const Call& call, EventSlot also) override;
  void issueUnit(const UnitIssue& unit) override;
  bool agree(std::uint64_t digest, std::span<const HeldCollective> group, bool across_ranks) override;
  void fallback(Fallback why, const Call& call) override;

 private:
  static constexpr std::uint32_t kNoOp = 0xFFFFFFFFu;

  std::uint32_t stream(StreamHandle handle);
  std::uint32_t addOp(StreamHandle handle, OpClass c, double work_ns, std::uint32_t dep = kNoOp,
                      std::uint32_t match = kNoMatch);
  std::uint32_t marker(StreamHandle handle, std::uint32_t dep = kNoOp) { return addOp(handle, OpClass::Marker, 0, dep); }
  // A transfer whose absent peers arrived when they did starts no earlier than it did.
  void keepAbsentPeers(std::uint32_t sim_op, analyzer::Index op);
  void hostWaitFor(std::uint32_t op);
  // The match id of the NCCL call this rank makes for the recorded call `seq` on `comm` (the
  // part of it from element `offset` on, for a unit): by the store's sequence numbers, not by
  // counting, so that a collective one rank's store lost (its GPU time never came) does not
  // pair every later call with another rank's next one.
  std::uint32_t matchOf(std::int64_t comm, std::int64_t seq, std::uint64_t offset, std::int32_t ranks);
  void collective(StreamHandle handle, const CollectiveArgs& args, analyzer::Index measured_op, std::int64_t seq,
                  std::uint64_t offset = 0);
  // Delayed mode: the unit a consumer should wait for instead of `unit`.
  std::uint32_t delayedUnitOp(EventSlot slot) const;

  const WhatIfModel& model_;
  ProgramContext& ctx_;
  std::uint32_t rank_;
  std::uint32_t host_;
  std::int64_t origin_ = 0;  // the recorded time of the simulation's start on this rank
  const RecordedCall* current_ = nullptr;
  bool simulate_ = false;
  std::vector<std::pair<StreamHandle, std::uint32_t>> streams_;  // handle -> sim stream
  std::vector<std::uint32_t> last_op_;                           // per sim stream of this rank
  std::vector<std::uint32_t> slot_op_;                           // per event slot: marker op
  std::vector<std::uint64_t> slot_unit_;                         // per event slot: unit recorded into it
  std::unordered_map<std::uint64_t, std::uint32_t> event_op_;    // application event -> record marker
  // Units: done-marker op per unit sequence, and the first unit of each flush.
  std::vector<std::uint32_t> unit_done_op_;
  std::vector<std::uint64_t> flush_first_unit_;
  std::uint64_t units_ = 0;
  bool expect_unit_done_ = false;  // the next recorded event is the done event of a unit
  // NCCL runs a communicator's collectives one after another, in the order a rank issued them,
  // whatever their streams: each waits for the last one issued on its communicator. Not where an
  // imported trace's threads are replayed as hosts of their own, whose issue order across threads
  // the model does not know.
  bool serialise_communicators_ = true;
  std::unordered_map<std::uint64_t, std::uint32_t> last_collective_;  // communicator -> its last op
};

}  // namespace syncopate::tuner
