// The reordering runtime's state in a process: the plan, the scheduler (the decisions) and the
// executor that carries them out with real CUDA and NCCL calls through the layer below (the
// recorder, then the real libraries). docs/tuner.md, "The runtime". Its parts, each in its own
// file: the communicators and their twins
// (communicators.hpp), the agreement between ranks (rank_agreement.hpp), the watchdog
// (watchdog.hpp) and the report each rank leaves (runtime_report.hpp). Calls the runtime makes
// itself (own_calls.hpp), and NCCL's own work (calls inside an NCCL call, and every call of the
// threads NCCL starts: syncopate/dispatch/nccl_threads.hpp), are never handed to the scheduler.
//
// Every other thread's calls are: one at a time, in the order they arrive, under one mutex
// (`sequence_`). PyTorch runs backward on autograd's thread and the optimizer on the main
// thread; the program orders their calls (the main thread waits for backward), so the
// scheduler sees them in the program's order and decides on that one sequence, as it would for
// one thread. Threads the program does not order with each other may interleave differently on
// different ranks: the agreement at the next flush then finds different groups, and every rank
// falls back together (ranks_disagree). NCCL's threads never wait for the mutex, so nothing the
// holder waits for inside a call can wait for it.
//
// Hot path (a call handed to the scheduler): the mutex, uncontended (one atomic exchange each
// way, no system call), no allocation, no system call of the runtime's own; the CUDA/NCCL calls
// it issues are the work itself.
#pragma once

#include <array>
#include <atomic>
#include <span>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "communicators.hpp"
#include "rank_agreement.hpp"
#include "runtime_report.hpp"
#include "syncopate/dispatch/cuda_headers.hpp"
#include "syncopate/dispatch/tables.hpp"
#include "syncopate/trace/function_ref.hpp"
#include "syncopate/tuner/executor.hpp"
#include "syncopate/tuner/plan.hpp"
#include "syncopate/tuner/scheduler.hpp"
#include "watchdog.hpp"

namespace syncopate::preload {

// The layer's view of the tables below it (set by its wrap functions).
struct RuntimeNext {
  const CudartTable* cudart = nullptr;
  const DriverTable* driver = nullptr;
  const NcclTable* nccl = nullptr;
};
RuntimeNext& runtimeNext() noexcept;

class PlanRuntime final : public tuner::Executor {
 public:
  using Original = trace::FunctionRef<int(tuner::StreamHandle)>;

  static PlanRuntime& instance() noexcept;
  // The runtime to hand this call to, or null when it must pass straight through.
  static PlanRuntime* forCall() noexcept;

  // Hands the application's call to the scheduler; `original` makes the call as the
  // application made it (on the stream given, for an event record moved to the join stream).
  // Returns what the call returned, or success when the scheduler held it.
  int run(const tuner::Call& call, const Original& original) noexcept;

  // NCCL bookkeeping (any thread that creates or ends a communicator). The application is
  // about to end `comm`; the scheduler has issued what it held, so nothing is issued on it or
  // its twin again (communicators.hpp).
  void communicatorCreated(ncclComm_t comm, int rank, int nranks) noexcept;
  void communicatorEnding(ncclComm_t comm, bool abort) noexcept;
  std::uint32_t communicatorIndex(ncclComm_t comm) noexcept;
  int communicatorSize(ncclComm_t comm) noexcept;
  // A failed collective the runtime issued on the application's behalf, reported on the
  // application's next NCCL call.
  ncclResult_t stickyError() const noexcept { return sticky_.load(std::memory_order_relaxed); }
  // The plan's channel counts (channels.hpp), read with the plan; empty without a usable plan.
  // Applied whether or not the schedule is (channels never change what a collective computes).
  std::span<const tuner::ChannelRule> channelRules() noexcept;
  // Before the calling thread's current device changes: another device than the scheduler's
  // stops the plan, while what it holds is still issued with its own device current.
  void selectingDevice(int device) noexcept;

  // tuner::Executor
  bool prepareEvents(std::uint32_t count) override;
  tuner::StreamHandle communicationStream() override;
  tuner::StreamHandle joinStream() override;
  void passthrough(const tuner::Call& call) override;
  void recordApplicationEvent(const tuner::Call& call, tuner::StreamHandle stream) override;
  void issueHeld(const tuner::HeldCollective& held) override;
  void recordEvent(tuner::EventSlot event, tuner::StreamHandle stream) override;
  void waitEvent(tuner::StreamHandle stream, tuner::EventSlot event) override;
  void hostWait(tuner::EventSlot event) override;
  void queryWith(const tuner::Call& call, tuner::EventSlot also) override;
  void issueUnit(const tuner::UnitIssue& unit) override;
  bool agree(std::uint64_t digest, std::span<const tuner::HeldCollective> group, bool across_ranks) override;
  void fallback(tuner::Fallback why, const tuner::Call& call) override;

 private:
  enum class State : std::uint8_t { Idle, Active, Off };

  PlanRuntime() = default;
  bool activate() noexcept;
  bool ensureScheduler() noexcept;
  void stopFor(tuner::Fallback why) noexcept;
  // The calling thread's current device (asked once per thread, then followed through its
  // device switches).
  int threadDevice() noexcept;
  void note(ncclResult_t result, const char* what) noexcept;
  // The application's collective (an all-reduce, a reduce-scatter or an all-gather) as it was
  // called, on `stream`.
  void issueAsCalled(const tuner::CollectiveArgs& a, cudaStream_t stream, const char* what) noexcept;
  void issueShardedFused(const tuner::UnitIssue& unit, cudaStream_t stream);
  unsigned char* fusionBuffer(std::size_t bytes);
  RuntimeReport report(const char* watchdog_message) const noexcept;
  void watchdogStalled(Watchdog::Stall what, std::int64_t waited_ns) noexcept;
  // A failed agreement (a peer died or left): ends the rank as the watchdog does.
  [[noreturn]] void peerFailed(const RankAgreement::Outcome& outcome) noexcept;
  // After a call that lets the program read what the GPU produced (a host synchronisation, a
  // query that answers "done"): a collective the plan issued on a communicator that has since
  // failed ends the rank as a failed agreement does, before the program reads its result.
  void stopIfAnIssuedCollectiveFailed() noexcept;
  void markIssuedOn(ncclComm_t comm) noexcept;
  // Once the rank is being stopped (fire, on any thread), the calling thread goes no further.
  void holdIfStopping() const noexcept;
  [[noreturn]] void fire(const char* message) noexcept;
  static void atExit() noexcept;

  std::atomic<State> state_{State::Idle};
  std::mutex sequence_;  // held for each call handed to the scheduler
  std::once_flag activation_;
  std::string plan_path_;
  std::optional<tuner::Plan> plan_;
  tuner::ScheduleRules rules_;
  std::optional<tuner::Scheduler> scheduler_;
  int device_ = -1;
  int rank_ = -1;

  // The call being handled, and what it returned.
  const Original* current_ = nullptr;
  int result_ = 0;
  std::atomic<ncclResult_t> sticky_{ncclSuccess};

  std::vector<cudaEvent_t> events_;
  cudaStream_t comm_stream_ = nullptr, join_stream_ = nullptr;
  bool expect_unit_done_ = false;  // the next event recorded is a unit's done event
  void* fusion_buffer_ = nullptr;
  std::size_t fusion_bytes_ = 0;

  CommunicatorTable comms_;
  RankAgreement agreement_;
  Watchdog watchdog_;

  // Fallbacks already said (one line each), and where first.
  std::array<std::uint64_t, tuner::kFallbackCount> said_{};
  std::string disabled_reason_;
  std::atomic<bool> fired_{false};
};

}  // namespace syncopate::preload
