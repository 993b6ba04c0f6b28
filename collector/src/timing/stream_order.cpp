#include "syncopate/collector/stream_order.hpp"

#include <algorithm>

namespace syncopate::preload {
namespace {

// How many records of one event are remembered; a wait refers to the latest before it.
constexpr std::size_t kRecordHistory = 16;

}  // namespace

void StreamOrder::add(const trace::OpRecord& pending, std::int64_t issue_ns) {
  Ticket ticket = static_cast<Ticket>(pending.end_ns);
  queues_[pending.stream_id].entries.push_back({pending, ticket, issue_ns});
  ++pending_;
  if (pending.kind == trace::OpKind::EventRecord) noteRecorded(pending.detail, issue_ns, -1);
}

void StreamOrder::noteRecorded(trace::EventId event, std::int64_t issue_ns, std::int64_t time_ns) {
  std::vector<RecordPoint>& points = records_[event];
  for (RecordPoint& point : points) {
    if (point.issue_ns == issue_ns) {
      point.time_ns = time_ns;
      return;
    }
  }
  if (points.size() == kRecordHistory) points.erase(points.begin());
  points.push_back({issue_ns, time_ns});
}

std::int64_t StreamOrder::recordedTimeBefore(trace::EventId event, std::int64_t issue_ns) const {
  auto found = records_.find(event);
  if (found == records_.end()) return 0;
  const RecordPoint* latest = nullptr;
  for (const RecordPoint& point : found->second) {
    if (point.issue_ns <= issue_ns && (latest == nullptr || point.issue_ns > latest->issue_ns)) latest = &point;
  }
  return latest == nullptr ? 0 : latest->time_ns;
}

bool StreamOrder::resolveHead(Queue& queue, Entry& entry, TimingBackend& timing, RecorderCounters& counters,
                              std::vector<trace::Record>& out) {
  trace::OpRecord& op = entry.op;
  if (entry.ticket == kNoTicket) return true;  // untimed: counted when issued, no row
  if (entry.ticket == kStreamOrderTicket) {
    std::int64_t time = std::max(queue.last_end_ns, entry.issue_ns);
    if (op.kind == trace::OpKind::StreamWait) {
      std::int64_t recorded = recordedTimeBefore(op.detail, entry.issue_ns);
      if (recorded < 0) return false;  // that record is still pending on its own stream
      time = std::max(time, recorded);
    } else {
      noteRecorded(op.detail, entry.issue_ns, time);
    }
    op.start_ns = op.end_ns = time;
    queue.last_end_ns = time;
    out.emplace_back(op);
    return true;
  }
  std::int64_t start = 0;
  std::int64_t end = 0;
  switch (timing.resolve(entry.ticket, start, end)) {
    case Resolution::Pending: return false;
    case Resolution::Failed:
      counters.ops_untimed_timing_failed.fetch_add(1, std::memory_order_relaxed);
      timing.release(entry.ticket);
      return true;
    case Resolution::Resolved: break;
  }
  timing.release(entry.ticket);
  op.start_ns = start;
  op.end_ns = std::max(start, end);
  queue.last_end_ns = std::max(queue.last_end_ns, op.end_ns);
  out.emplace_back(op);
  return true;
}

void StreamOrder::resolve(TimingBackend& timing, std::vector<trace::Record>& out, RecorderCounters& counters) {
  // A wait may depend on a record on another stream: sweep until nothing moves.
  bool moved = true;
  while (moved && pending_ > 0) {
    moved = false;
    for (auto& [stream, queue] : queues_) {
      while (!queue.entries.empty() && resolveHead(queue, queue.entries.front(), timing, counters, out)) {
        queue.entries.pop_front();
        --pending_;
        moved = true;
      }
    }
  }
}

void StreamOrder::abandon(TimingBackend& timing, RecorderCounters& counters) {
  for (auto& [stream, queue] : queues_) {
    for (Entry& entry : queue.entries) {
      if (entry.ticket == kNoTicket) continue;
      counters.ops_untimed_timing_failed.fetch_add(1, std::memory_order_relaxed);
      if (entry.ticket != kStreamOrderTicket) timing.release(entry.ticket);
    }
    queue.entries.clear();
  }
  pending_ = 0;
}

}  // namespace syncopate::preload
