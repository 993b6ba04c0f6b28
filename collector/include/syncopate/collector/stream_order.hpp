// Pending ops become rows in the order their streams execute them. Each stream is a FIFO of
// the ops issued to it: the head is resolved first (a later op on a stream cannot have ended
// before an earlier one), so for CUDA events only the head's event is ever queried.
//
// Event records and stream waits take no GPU time of their own and are not timed by either
// backend; their GPU time is derived from stream order, identically for both backends:
//   EventRecord  at max(end of the previous op on its stream, when it was issued)
//   StreamWait   at max(end of the previous op on its stream, the time of the record of that
//                event that preceded the wait, when it was issued)
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "syncopate/collector/recorder_counters.hpp"
#include "syncopate/trace/records.hpp"
#include "syncopate/collector/timing_backend.hpp"

namespace syncopate::preload {

// The ticket of ops whose time comes from stream order (EventRecord, StreamWait).
inline constexpr Ticket kStreamOrderTicket = ~Ticket{0};

class StreamOrder {
 public:
  // `pending` has start_ns = 0 and end_ns = its ticket; `issue_ns` is when its call began.
  void add(const trace::OpRecord& pending, std::int64_t issue_ns);

  // Resolves every op that can be, in stream order, appending finished records to `out`.
  void resolve(TimingBackend& timing, std::vector<trace::Record>& out, RecorderCounters& counters);

  std::size_t pendingCount() const noexcept { return pending_; }

  // Gives up on whatever is still pending (at exit, after the backend drained): counted.
  void abandon(TimingBackend& timing, RecorderCounters& counters);

 private:
  struct Entry {
    trace::OpRecord op;
    Ticket ticket;
    std::int64_t issue_ns;
  };
  struct Queue {
    std::deque<Entry> entries;
    std::int64_t last_end_ns = 0;
  };
  // When an event was recorded (issue time) and, once known, its GPU time.
  struct RecordPoint {
    std::int64_t issue_ns;
    std::int64_t time_ns;  // -1 while the record is pending
  };

  bool resolveHead(Queue& queue, Entry& entry, TimingBackend& timing, RecorderCounters& counters,
                   std::vector<trace::Record>& out);
  // The latest record of `event` issued before `issue_ns`: its time, -1 while pending, 0 when
  // there is none.
  std::int64_t recordedTimeBefore(trace::EventId event, std::int64_t issue_ns) const;
  void noteRecorded(trace::EventId event, std::int64_t issue_ns, std::int64_t time_ns);

  std::unordered_map<trace::StreamId, Queue> queues_;
  std::unordered_map<trace::EventId, std::vector<RecordPoint>> records_;
  std::size_t pending_ = 0;
};

}  // namespace syncopate::preload
