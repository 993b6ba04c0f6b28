// Pending ops become rows in the order their streams execute them. Each stream is a FIFO of
// the ops issued to it: the head is resolved first (a later op on a stream cannot have ended
// before an earlier one), so for CUDA events only the head's event is ever queried.
//
// Event records and stream waits take no GPU time of their own and are not timed by either
// backend; their GPU time is derived from stream order, identically for both backends:
//   EventRecord  at max(end of the previous op on its stream, when it was issued)
//   StreamWait   at max(end of the previous op on its stream, the time of the record of that
//                event that preceded the wait, when it was issued)
// So are copies and fills of 0 bytes, which CUDA completes without GPU work (zero length, at
// max(end of the previous op on its stream, when it was issued)).
//
// An op that was timed but for which the backend never reports GPU work (CUPTI has no activity
// for what CUDA completes without work, whatever the recorder could foresee) must not hold up
// its stream: once a later op on its stream has finished, the head's work, if it had any, has
// finished too; if its times have still not arrived a while later (or at all, once the backend
// has drained at exit), it is written the same way as a 0-byte copy and counted
// (ops_without_gpu_activity).
//
// Later work on the head's own stream is not the only proof. A host call that returned only once
// GPU work had finished proves that work done (noteHostSync): a stream synchronize, everything
// issued to that stream before it; an event synchronize, everything issued to the event's stream
// before its record; a device or context synchronize, every stream of that device. And work a
// proven stream waited for (cudaStreamWaitEvent) is done too: the stream the event was recorded
// on, up to that record. This is what ends the wait when nothing later on the stream did GPU
// work: NCCL runs a collective of one rank without a kernel (in place: no work at all), so a
// one-GPU job's all-reduce stream holds nothing that CUPTI reports, and PyTorch's compute stream
// waits on it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <vector>

#include "syncopate/collector/recorder_counters.hpp"
#include "syncopate/trace/records.hpp"
#include "syncopate/collector/timing_backend.hpp"

namespace syncopate::preload {

// The ticket of ops whose time comes from stream order (EventRecord, StreamWait, and copies and
// fills of 0 bytes).
inline constexpr Ticket kStreamOrderTicket = ~Ticket{0};

class StreamOrder {
 public:
  // `pending` has start_ns = 0 and end_ns = its ticket; `issue_ns` is when its call began,
  // `returned_ns` when it returned (0: not known, taken as issue_ns): its work is on its stream
  // by then, so a host synchronize that began later covers it.
  void add(const trace::OpRecord& pending, std::int64_t issue_ns, std::int64_t returned_ns = 0);

  // Resolves every op that can be, in stream order, appending finished records to `out`.
  // `now_ns` (CLOCK_MONOTONIC) times the wait for a head that did no GPU work; `drained`: the
  // backend has delivered everything it ever will (at exit), so no such wait is needed.
  void resolve(TimingBackend& timing, std::vector<trace::Record>& out, RecorderCounters& counters,
               std::int64_t now_ns, bool drained = false);

  std::size_t pendingCount() const noexcept { return pending_; }

  // The device a stream belongs to (-1 when not known).
  using DeviceOfStream = std::function<std::int32_t(trace::StreamId)>;
  // `sync` is the HostSync record of a call that succeeded (start_ns: the call began): the work
  // it waited for, and the work that work waited for, is done on the GPU. The caller hands it over
  // only once every op and event record issued before the call began has been added (the rings
  // of other threads drained after it).
  void noteHostSync(const trace::OpRecord& sync, const DeviceOfStream& device_of);

  // Gives up on whatever is still pending (at exit, after the backend drained): counted.
  void abandon(TimingBackend& timing, RecorderCounters& counters);

 private:
  struct Entry {
    trace::OpRecord op;
    Ticket ticket;
    std::int64_t issue_ns;
    std::int64_t returned_ns;
    std::int64_t pending_since_ns = 0;  // first seen waiting at the head of its stream
    std::int64_t overtaken_ns = 0;      // when later work on its stream was seen finished
  };
  struct Queue {
    std::deque<Entry> entries;
    std::int64_t last_end_ns = 0;
    std::int64_t next_look_ahead_ns = 0;
    // Ops whose calls returned up to here are known finished on the GPU (noteHostSync).
    std::int64_t proven_through_ns = 0;
  };
  struct Pass {
    TimingBackend& timing;
    RecorderCounters& counters;
    std::vector<trace::Record>& out;
    std::int64_t now_ns;
    bool drained;
  };
  // When an event was recorded (issue time) and, once known, its GPU time.
  struct RecordPoint {
    trace::StreamId stream;
    std::int64_t issue_ns;
    std::int64_t time_ns;  // -1 while the record is pending
  };

  bool resolveHead(Queue& queue, Entry& entry, const Pass& pass);
  // Whether the pending head `entry` did no GPU work: later work on its stream finished, and its
  // own times still have not come.
  bool withoutGpuWork(Queue& queue, Entry& entry, const Pass& pass);
  // Writes `entry` as stream order times it: zero length, after what precedes it.
  void placeInStreamOrder(Queue& queue, Entry& entry, std::vector<trace::Record>& out);
  // The latest record of `event` issued before `issue_ns`: its time, -1 while pending, 0 when
  // there is none.
  std::int64_t recordedTimeBefore(trace::EventId event, std::int64_t issue_ns) const;
  // The latest record of `event` issued at or before `issue_ns`, or null.
  const RecordPoint* recordBefore(trace::EventId event, std::int64_t issue_ns) const;
  void noteRecorded(trace::EventId event, trace::StreamId stream, std::int64_t issue_ns, std::int64_t time_ns);
  // Ops issued to `stream` whose calls returned up to `through_ns` finished, and so did what they
  // waited for.
  void proveFinished(trace::StreamId stream, std::int64_t through_ns);

  std::unordered_map<trace::StreamId, Queue> queues_;
  std::unordered_map<trace::EventId, std::vector<RecordPoint>> records_;
  std::size_t pending_ = 0;
};

}  // namespace syncopate::preload
