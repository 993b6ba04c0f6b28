#include "syncopate/collector/stream_order.hpp"

#include <algorithm>
#include <iterator>

namespace syncopate::preload {
namespace {

// How many records of one event are remembered; a wait refers to the latest before it.
constexpr std::size_t kRecordHistory = 16;

// A head waiting this long has the ops behind it looked at (at most this often, at most this
// many of them: a stream is busy far more often than it holds an op without GPU work).
constexpr std::int64_t kLookAheadAfterNs = 100'000'000;
constexpr std::int64_t kLookAheadIntervalNs = 100'000'000;
constexpr std::size_t kLookAheadOps = 16;
// Once later work on its stream finished, how long a head's own times may still take to arrive
// (CUPTI delivers the records of finished work at its next flush, every 20 ms here).
constexpr std::int64_t kOvertakenGraceNs = 500'000'000;

}  // namespace

void StreamOrder::add(const trace::OpRecord& pending, std::int64_t issue_ns, std::int64_t returned_ns) {
  Ticket ticket = static_cast<Ticket>(pending.end_ns);
  // A stream runs its ops in the order they were issued, whichever thread issued them; the
  // rings of several threads issuing to one stream are drained one after another, so an op can
  // arrive here after one issued later. It takes its place by issue time: a queue out of issue
  // order could put a wait ahead of the record it waits for while that record's stream waits on
  // this one, and neither would ever resolve.
  std::deque<Entry>& entries = queues_[pending.stream_id].entries;
  auto at = entries.end();
  while (at != entries.begin() && std::prev(at)->issue_ns > issue_ns) --at;
  entries.insert(at, {pending, ticket, issue_ns, returned_ns != 0 ? returned_ns : issue_ns});
  ++pending_;
  if (pending.kind == trace::OpKind::EventRecord) noteRecorded(pending.detail, pending.stream_id, issue_ns, -1);
}

void StreamOrder::noteRecorded(trace::EventId event, trace::StreamId stream, std::int64_t issue_ns,
                               std::int64_t time_ns) {
  std::vector<RecordPoint>& points = records_[event];
  for (RecordPoint& point : points) {
    if (point.issue_ns == issue_ns) {
      point.time_ns = time_ns;
      return;
    }
  }
  if (points.size() == kRecordHistory) points.erase(points.begin());
  points.push_back({stream, issue_ns, time_ns});
}

const StreamOrder::RecordPoint* StreamOrder::recordBefore(trace::EventId event, std::int64_t issue_ns) const {
  auto found = records_.find(event);
  if (found == records_.end()) return nullptr;
  const RecordPoint* latest = nullptr;
  for (const RecordPoint& point : found->second) {
    if (point.issue_ns <= issue_ns && (latest == nullptr || point.issue_ns > latest->issue_ns)) latest = &point;
  }
  return latest;
}

std::int64_t StreamOrder::recordedTimeBefore(trace::EventId event, std::int64_t issue_ns) const {
  const RecordPoint* latest = recordBefore(event, issue_ns);
  return latest == nullptr ? 0 : latest->time_ns;
}

void StreamOrder::noteHostSync(const trace::OpRecord& sync, const DeviceOfStream& device_of) {
  switch (sync.syncKind()) {
    case trace::SyncKind::Stream: proveFinished(sync.stream_id, sync.start_ns); break;
    case trace::SyncKind::Event:
      if (const RecordPoint* point = recordBefore(sync.detail, sync.start_ns)) {
        proveFinished(point->stream, point->issue_ns);
      }
      break;
    case trace::SyncKind::Device:
    case trace::SyncKind::Context: {  // each stream of the device of `detail` (a context's, and others')
      std::vector<trace::StreamId> streams;
      for (const auto& [stream, queue] : queues_) {
        if (device_of(stream) == static_cast<std::int32_t>(sync.detail)) streams.push_back(stream);
      }
      for (trace::StreamId stream : streams) proveFinished(stream, sync.start_ns);
      break;
    }
    default: break;  // a synchronize of what is not known proves nothing
  }
}

void StreamOrder::proveFinished(trace::StreamId stream, std::int64_t through_ns) {
  std::vector<std::pair<trace::StreamId, std::int64_t>> proofs{{stream, through_ns}};
  while (!proofs.empty()) {
    const auto [id, through] = proofs.back();
    proofs.pop_back();
    Queue& queue = queues_[id];
    // Watermarks only rise, so a cycle of waits ends here.
    if (through <= queue.proven_through_ns) continue;
    queue.proven_through_ns = through;
    for (const Entry& entry : queue.entries) {
      if (entry.issue_ns > through) break;  // a queue is in issue order
      if (entry.op.kind != trace::OpKind::StreamWait || entry.returned_ns > through) continue;
      if (const RecordPoint* point = recordBefore(entry.op.detail, entry.issue_ns)) {
        proofs.emplace_back(point->stream, point->issue_ns);
      }
    }
  }
}

void StreamOrder::placeInStreamOrder(Queue& queue, Entry& entry, std::vector<trace::Record>& out) {
  trace::OpRecord& op = entry.op;
  const std::int64_t time = std::max(queue.last_end_ns, entry.issue_ns);
  op.start_ns = op.end_ns = time;
  queue.last_end_ns = time;
  out.emplace_back(op);
}

bool StreamOrder::resolveHead(Queue& queue, Entry& entry, const Pass& pass) {
  trace::OpRecord& op = entry.op;
  if (entry.ticket == kNoTicket) return true;  // untimed: counted when issued, no row
  if (entry.ticket == kStreamOrderTicket) {
    if (op.kind == trace::OpKind::StreamWait) {
      const std::int64_t recorded = recordedTimeBefore(op.detail, entry.issue_ns);
      if (recorded < 0) return false;  // that record is still pending on its own stream
      queue.last_end_ns = std::max(queue.last_end_ns, recorded);
    }
    placeInStreamOrder(queue, entry, pass.out);
    if (op.kind == trace::OpKind::EventRecord) noteRecorded(op.detail, op.stream_id, entry.issue_ns, op.start_ns);
    return true;
  }
  std::int64_t start = 0;
  std::int64_t end = 0;
  switch (pass.timing.resolve(entry.ticket, start, end)) {
    case Resolution::Pending:
      if (!withoutGpuWork(queue, entry, pass)) return false;
      pass.counters.ops_without_gpu_activity.fetch_add(1, std::memory_order_relaxed);
      pass.timing.releaseResolved(entry.ticket);
      placeInStreamOrder(queue, entry, pass.out);
      return true;
    case Resolution::Failed:
      pass.counters.ops_untimed_timing_failed.fetch_add(1, std::memory_order_relaxed);
      pass.timing.releaseResolved(entry.ticket);
      return true;
    case Resolution::Resolved: break;
  }
  pass.timing.releaseResolved(entry.ticket);
  op.start_ns = start;
  op.end_ns = std::max(start, end);
  queue.last_end_ns = std::max(queue.last_end_ns, op.end_ns);
  pass.out.emplace_back(op);
  return true;
}

bool StreamOrder::withoutGpuWork(Queue& queue, Entry& entry, const Pass& pass) {
  if (entry.pending_since_ns == 0) entry.pending_since_ns = pass.now_ns;
  // Proven finished: its times, if it had work, come at CUPTI's next flushes after this look.
  if (entry.overtaken_ns == 0 && entry.returned_ns <= queue.proven_through_ns) entry.overtaken_ns = pass.now_ns;
  if (entry.overtaken_ns == 0) {
    if (!pass.drained &&
        (pass.now_ns - entry.pending_since_ns < kLookAheadAfterNs || pass.now_ns < queue.next_look_ahead_ns)) {
      return false;
    }
    queue.next_look_ahead_ns = pass.now_ns + kLookAheadIntervalNs;
    bool later_finished = false;
    std::size_t looked = 0;
    for (std::size_t i = 1; i < queue.entries.size() && looked < kLookAheadOps && !later_finished; ++i) {
      const Ticket later = queue.entries[i].ticket;
      // Ops of one NCCL group share the head's ticket; markers and untimed ops say nothing.
      if (later == kNoTicket || later == kStreamOrderTicket || later == entry.ticket) continue;
      ++looked;
      std::int64_t start = 0;
      std::int64_t end = 0;
      later_finished = pass.timing.resolve(later, start, end) == Resolution::Resolved;
    }
    if (!later_finished) return false;
    entry.overtaken_ns = pass.now_ns;
  }
  return pass.drained || pass.now_ns - entry.overtaken_ns >= kOvertakenGraceNs;
}

void StreamOrder::resolve(TimingBackend& timing, std::vector<trace::Record>& out, RecorderCounters& counters,
                          std::int64_t now_ns, bool drained) {
  const Pass pass{timing, counters, out, now_ns, drained};
  // A wait may depend on a record on another stream: sweep until nothing moves.
  bool moved = true;
  while (moved && pending_ > 0) {
    moved = false;
    for (auto& [stream, queue] : queues_) {
      while (!queue.entries.empty() && resolveHead(queue, queue.entries.front(), pass)) {
        queue.entries.pop_front();
        --pending_;
        moved = true;
      }
    }
  }
  timing.publishReleases();
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
