// The scheduler: the decisions of the reordering runtime, as a pure function of the plan's
// rules and the process's own sequence of calls (never of timing), so that every rank makes
// the same decisions and the what-if model predicts exactly what the runtime will do.
//
// What it does (docs/tuner.md, "The runtime", says why each rule keeps the program correct):
//   - All-reduces, reduce-scatters and all-gathers (rescheduled(), calls.hpp) are held instead
//     of issued. Each remembers what it depends on: the last op that touched its buffers, when
//     that op provably follows every other access to them (a vector clock per stream follows
//     events, waits and host syncs), else its position in its stream (everything issued there
//     before it).
//   - At a flush point the held group is issued as the plan says: all-reduces fused into
//     buckets and buckets split into parts (a reduce-scatter or an all-gather is a bucket of
//     its own, in one part), parts in the plan's order, on the communication stream, each part
//     after the ops its members depend on, each followed by a "done" event.
//     Flush points: an op that touches a held buffer, an event record, a host sync or query,
//     an op the scheduler cannot reason about, an NCCL group, the end of a communicator.
//   - An op that touches a buffer whose collective is still in flight first waits for the
//     done event of that buffer's bucket (the deferred wait), on its own stream; ops that do
//     not touch it do not wait.
//   - An event the application records on a stream whose work was redirected is recorded on
//     a join stream after both, so it still covers everything it covered before; stream syncs
//     and queries likewise cover redirected work.
//   - What it cannot prove (unknown parameter layouts, unknown APIs, graph capture, the
//     legacy stream) makes it flush, wait for everything in flight and keep the original
//     order there. Ranks agree (Executor::agree) at the first flush, before every group the plan
//     does not know and before every group whose plan changes the order or set of NCCL calls,
//     on the history of every group flushed so far; when they do not, every rank disables the
//     plan and issues in the original order from then on.
//
// Hot path: onCall() allocates nothing after construction, takes no lock and makes no system
// call of its own; tables have fixed capacities (SchedulerLimits) and exceeding one disables
// the plan (Fallback::CapacityExceeded). One scheduler per device, used by one thread.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "syncopate/tuner/calls.hpp"
#include "syncopate/tuner/executor.hpp"
#include "syncopate/tuner/schedule_rules.hpp"

namespace syncopate::tuner {

// The runtime creates held + units + touch_events + 1 CUDA events when it starts.
struct SchedulerLimits {
  std::uint32_t streams = 32;        // application streams plus the runtime's two
  std::uint32_t tensors = 8192;      // distinct buffers of held collectives
  std::uint32_t held = 1024;         // collectives held between two flush points
  std::uint32_t units = 512;         // done events in flight (a ring)
  std::uint32_t touch_events = 2048; // producer events (a ring)
  std::uint32_t app_events = 1024;   // application events whose ordering is followed
};

struct SchedulerStats {
  std::uint64_t calls = 0;
  std::uint64_t held = 0;             // collectives held
  std::uint64_t planned_groups = 0;   // groups issued as the plan says
  std::uint64_t unplanned_groups = 0; // groups issued in the original order
  std::uint64_t kept_groups = 0;      // groups the plan keeps in place (GroupPlan::keep)
  std::uint64_t units = 0;            // NCCL calls issued for planned groups
  std::uint64_t producer_waits = 0;   // units that waited only for their producers
  std::uint64_t position_waits = 0;   // units that waited for their call's position
  std::uint64_t deferred_waits = 0;   // consumer waits inserted
  std::uint64_t joins = 0;            // application events recorded on the join stream
  std::uint64_t buffers_merged = 0;   // collective buffers met by one of another extent (their union kept)
  std::uint64_t buffers_retired = 0;  // ... and dropped instead, every stream having waited for them
  // Kernel launches seen, and those ordered as barriers (effects unknown, or the legacy
  // stream): their ratio is the report's barrier_share (docs/tuner.md, "Reports").
  std::uint64_t launches = 0;
  std::uint64_t barrier_launches = 0;
  std::array<std::uint64_t, kFallbackCount> fallbacks{};
  bool disabled = false;
};

class Scheduler {
 public:
  // The scheduler keeps a reference to `rules`, which must outlive it: a temporary would leave
  // it dangling (AddressSanitizer found one in a test), so one does not compile.
  Scheduler(const ScheduleRules& rules, Executor& executor, const SchedulerLimits& limits = {});
  Scheduler(ScheduleRules&&, Executor&, const SchedulerLimits& = {}) = delete;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Handles one application call: issues it (possibly elsewhere or later) and whatever the
  // plan asks for around it.
  void onCall(const Call& call);
  // Issues everything held and makes the host wait for all redirected work (process exit).
  void finish();
  // Disables the plan for good (issuing what it holds in the original order and making every
  // stream wait for what is in flight), for a reason found outside the call sequence.
  void stop(Fallback why, const Call& call) { disable(why, call); }

  bool active() const { return mode_ == Mode::Active; }
  const SchedulerStats& stats() const { return stats_; }

 private:
  enum class Mode : std::uint8_t { Active, Disabled };
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  struct Tensor {
    std::uint64_t begin = 0, end = 0;
    bool held = false;
    std::uint64_t wait_units = 0;      // consumers wait until this many units are done (0: none)
    std::uint32_t last_touch_stream = kNone;
    std::uint64_t last_touch_pc = 0;
    bool dominated = false;            // the last touch follows every other access
    std::uint32_t touch_slot = kNone;  // producer event of the last touch, and its generation
    std::uint32_t touch_gen = 0;
  };
  struct HeldMeta {
    std::uint32_t stream = 0;          // stream index
    std::uint32_t send_tensor = kNone, recv_tensor = kNone;
    EventSlot position = 0;            // its position slot (recorded at the call when needed)
    bool has_position = false;         // the position slot holds the call's position
    std::uint64_t last_unit = 0;       // the last unit holding any of its elements
  };
  struct StreamState {
    StreamHandle handle = 0;
    std::uint32_t seq = 0;             // positions issued on it
    std::uint64_t waited_units = 0;    // units it has waited for (a prefix of the unit order)
    std::uint64_t origin_units = 0;    // units holding work redirected from it (a prefix bound)
    std::uint32_t barrier_seq = 0;     // position of its last op with unknown effects
    std::uint64_t host_epoch = 0;      // host syncs it has merged into its clock
  };
  struct AppEvent {
    std::uint64_t units = 0;           // units it covers
  };
  struct TableEntry {                  // open addressing: handle -> dense index
    std::uint64_t key = 0;
    std::uint32_t index = 0;
  };

  // --- tables ---
  std::uint32_t streamIndex(StreamHandle handle);  // kNone when full
  AppEvent* appEvent(std::uint64_t handle, bool create);
  std::uint32_t* clock(std::uint32_t stream) { return &vc_[static_cast<std::size_t>(stream) * limits_.streams]; }
  std::uint32_t* appEventClock(const AppEvent* e) {
    return &event_vc_[static_cast<std::size_t>(e - events_.data()) * limits_.streams];
  }
  std::uint32_t& touchSeq(std::uint32_t tensor, std::uint32_t stream) {
    return touch_seq_[static_cast<std::size_t>(tensor) * limits_.streams + stream];
  }
  // Empties scratch_ for the tensors one lookup finds.
  void startLookup() {
    scratch_.clear();
    ++lookups_;
  }
  // Appends the tensors that `touch` reaches to scratch_ (each once per lookup).
  void findTouched(const Touch& touch);
  // The tensor holding [begin, end): found, or registered as the union of that range and the
  // buffers it meets (held ones flushed first). kNone when the plan was disabled.
  std::uint32_t tensorFor(std::uint64_t begin, std::uint64_t end, const Call& call);

  // --- rules ---
  void onOp(const Call& call);
  void issueOp(const Call& call, std::span<const Touch> touches);
  void onCollective(const Call& call);
  void hold(const Call& call);
  void onEventRecord(const Call& call);
  void onStreamWait(const Call& call);
  void onHostSync(const Call& call);
  void onBarrier(const Call& call, Fallback why);
  bool legacyMustWait();
  // The stream's index, or kNone for the legacy stream while it must wait for everything (a
  // wait on it, a synchronize or a query of it then covers all redirected work).
  std::uint32_t orderedStreamIndex(StreamHandle stream);
  void flush();
  void issuePlanned(const GroupPlan& plan);
  // Every bucket one reduction, and only all-reduce buckets fused or split.
  bool executable(const GroupPlan& plan) const;
  // Whether every application stream has waited for the first `units` units.
  bool settled(std::uint64_t units) const;
  // Whether the plan changes the program's order or set of NCCL calls (fuses, splits or reorders).
  static bool reorders(const GroupPlan& plan);
  // Chains the group into the history of each of its communicators; the digest of those chains.
  std::uint64_t chainHistory(std::uint64_t group);
  bool contiguous(std::uint32_t first, std::uint32_t end) const;
  void issueInOrder();
  void disable(Fallback why, const Call& call);
  void drainAll();
  void fallback(Fallback why, const Call& call);

  // --- ordering helpers ---
  void mergeHostClock(std::uint32_t stream);
  void waitForUnits(std::uint32_t stream, std::uint64_t units);
  std::uint64_t waitedUnits(std::uint32_t stream) const;
  void recordTouch(std::uint32_t tensor, std::uint32_t stream, EventSlot slot, std::uint32_t gen);
  bool producerProven(const Tensor& t, std::uint32_t stream) const;
  std::pair<EventSlot, std::uint32_t> nextTouchEvent();
  EventSlot unitSlot(std::uint64_t unit) const {
    return unit_base_ + static_cast<EventSlot>(unit % limits_.units);
  }

  const ScheduleRules& rules_;
  Executor& exec_;
  SchedulerLimits limits_;
  Mode mode_ = Mode::Active;
  SchedulerStats stats_;

  std::vector<StreamState> streams_;
  std::vector<TableEntry> stream_table_;
  std::uint32_t used_streams_ = 0;
  std::vector<std::uint32_t> vc_;        // streams x streams: vc_[s][s2] = position of s2 that s follows
  std::vector<std::uint32_t> host_vc_;   // what the host has waited for
  std::uint64_t host_epoch_ = 0;
  std::uint64_t host_waited_units_ = 0;
  // Collectives the program issued on blocking streams (which synchronise with the legacy
  // default stream) but the runtime holds or redirected to its non-blocking ones: while any is
  // held, or issued in units the legacy stream has not waited for, an op on the legacy stream
  // must wait for them itself (legacyMustWait).
  bool blocking_held_ = false;
  std::uint64_t blocking_units_ = 0;
  std::vector<AppEvent> events_;
  std::vector<TableEntry> event_table_;
  std::uint32_t used_events_ = 0;
  std::vector<std::uint32_t> event_vc_;
  std::vector<Tensor> tensors_;
  std::vector<std::uint32_t> tensor_order_;  // tensor indices sorted by begin (the buffers in use)
  std::vector<std::uint32_t> free_tensors_;  // indices of buffers merged into a union
  std::vector<std::uint32_t> touch_seq_;     // tensors x streams
  std::vector<std::uint32_t> scratch_;       // tensors touched by the current call
  std::vector<std::uint64_t> scratch_mark_;  // per tensor: the lookup that last added it to scratch_
  std::uint64_t lookups_ = 0;
  std::vector<HeldCollective> held_;
  std::vector<HeldMeta> held_meta_;
  std::vector<std::uint32_t> touch_gen_;     // per producer event slot
  std::vector<std::uint64_t> slot_waited_;   // per event slot: flush that already waited on it
  std::vector<std::uint32_t> unit_seq_;      // per unit slot: position on its stream after it
  std::vector<std::uint32_t> unit_stream_;   // per unit slot: the stream it ran on

  std::uint32_t comm_stream_ = kNone, join_stream_ = kNone;
  EventSlot position_base_ = 0, unit_base_ = 0, join_slot_ = 0, touch_base_ = 0;
  std::uint32_t next_touch_ = 0;
  std::uint64_t pc_ = 0;                     // calls seen
  std::uint64_t last_barrier_pc_ = 0;
  std::uint64_t units_ = 0;                  // units issued
  std::uint64_t flushes_ = 0;
  struct CommHistory {
    std::uint64_t comm = 0;   // the communicator handle (0: free)
    std::uint64_t chain = 0;  // every group flushed on it so far
    std::uint64_t flush = 0;  // the flush that last chained into it
  };
  std::array<CommHistory, 16> histories_{};
  std::uint32_t nccl_group_depth_ = 0;
  bool capturing_ = false;
};

}  // namespace syncopate::tuner
