#include "bounds.hpp"

#include <algorithm>
#include <limits>

namespace simgpu::detail {
namespace {

// Chains of waits are short in practice; a longer one is cut, which only makes the bound
// lower (more cautious), never wrong.
constexpr int kMaxDepth = 64;
// The most queued ops of a stream looked at to bound a later one's dispatch.
constexpr std::size_t kMaxQueueWalk = 64;

TimeNs startBoundAt(const Stream& s, const Entry& e, const Entry* self, int depth);

// The least time an op that has not been timed yet takes: its duration when known at enqueue,
// or a lower bound on it.
TimeNs leastDuration(const Entry& e) { return std::max({TimeNs{0}, e.op.duration_ns, e.op.least_duration_ns}); }

TimeNs plus(TimeNs bound, TimeNs duration) { return bound == kNever ? kNever : bound + duration; }

// How early the earliest op of `s` that has not completed could complete; every later op of
// `s` completes after it.
TimeNs completionBound(const Stream& s, const Entry* self, int depth) {
  const Entry* first = s.current != nullptr ? s.current : (s.queue.empty() ? nullptr : &s.queue.front());
  if (first == nullptr) return kNever;
  if (first == self) return kNever;
  switch (first->phase) {
    case Phase::Queued:
    case Phase::Waiting:
      return plus(startBoundAt(s, *first, self, depth + 1), leastDuration(*first));
    case Phase::Started:
      return std::max(first->start_ns, first->start_floor) + leastDuration(*first);
    case Phase::Timed:
      return first->end_ns;
  }
  return first->ready_ns;
}

// How early the op holding the compute engine frees it.
TimeNs engineBound(const Device& d, const Entry& asking, const Entry* self) {
  TimeNs bound = d.engine_free_at;
  const Entry* holder = d.engine_holder;
  if (holder == nullptr || holder == &asking) return bound;
  if (holder == self) return kNever;
  return std::max(bound, holder->phase == Phase::Timed ? holder->end_ns : holder->start_ns + leastDuration(*holder));
}

// How early an op could leave its work queue: what it waits for done, not the compute engine.
TimeNs dispatchBoundAt(const Stream& s, const Entry& e, const Entry* self, int depth);

// How early op `seq` of `s` could leave its work queue (a watch on_dispatch). An op leaves no
// earlier than the model end of the op before it on its stream (runEntry: its dispatch is at
// least the stream's clock), so one queued behind others is bounded by them too: without that,
// an op behind one that waits for `self` would be bounded by its own waits alone, too early,
// and `self` would wait for it (under CUDA_DEVICE_MAX_CONNECTIONS=1, for the bound wait's limit).
TimeNs dispatchBound(const Stream& s, std::uint64_t seq, const Entry* self, int depth) {
  TimeNs floor = std::numeric_limits<TimeNs>::min();  // the end of the ops before it
  if (const Entry* current = s.current; current != nullptr) {
    if (current->seq == seq) return dispatchBoundAt(s, *current, self, depth + 1);
    if (current == self) return kNever;
    floor = current->phase == Phase::Timed ? current->end_ns
                                           : plus(startBoundAt(s, *current, self, depth + 1), leastDuration(*current));
  }
  for (std::size_t i = 0; i < s.queue.size() && floor != kNever; ++i) {
    const Entry& queued = s.queue.at(i);
    if (queued.seq == seq) return std::max(floor, dispatchBoundAt(s, queued, self, depth + 1));
    // A long queue is cut: the ends so far still bound the op's dispatch from below.
    if (i >= kMaxQueueWalk) return floor;
    floor = plus(std::max(floor, startBoundAt(s, queued, self, depth + 1)), leastDuration(queued));
  }
  if (floor == kNever) return kNever;
  return 0;  // not found (it left, and the watch is fulfilled): the most cautious bound
}

TimeNs waitsBound(const Stream& s, const Entry& e, const Entry* self, int depth) {
  TimeNs bound = std::max(e.ready_ns, s.clock);
  if (depth > kMaxDepth) return bound;
  for (const Watch& w : e.watches) {
    const TimeNs until = w.timed         ? w.end
                         : w.on_dispatch ? dispatchBound(*w.producer, w.seq, self, depth)
                                         : completionBound(*w.producer, self, depth);
    bound = std::max(bound, until);
    if (bound == kNever) return kNever;
  }
  return bound;
}

TimeNs dispatchBoundAt(const Stream& s, const Entry& e, const Entry* self, int depth) {
  if (e.phase == Phase::Started || e.phase == Phase::Timed) return e.dispatch_ns;
  if (&e == self) return kNever;
  return waitsBound(s, e, self, depth);
}

TimeNs startBoundAt(const Stream& s, const Entry& e, const Entry* self, int depth) {
  if (e.phase == Phase::Started) return std::max(e.start_ns, e.start_floor);
  if (e.phase == Phase::Timed) return e.start_ns;
  TimeNs bound = waitsBound(s, e, self, depth);
  if (bound == kNever || depth > kMaxDepth) return bound;
  if (e.op.work_class == WorkClass::Compute) bound = std::max(bound, engineBound(*s.device, e, self));
  return bound;
}

}  // namespace

TimeNs startBound(const Stream& s, const Entry& e, const Entry* self) { return startBoundAt(s, e, self, 0); }

namespace {

// What a started op that is sought counts as: its start bound, or (to its peers) the start it
// announced to them, before what it learnt from them since (Entry::start_floor).
enum class StartedOp : std::uint8_t { Bounded, Announced };

// How early the next op of `s` that `sought` picks out, not on its device's timeline yet, could
// start: each op starts no earlier than the one before it on the stream ends.
template <typename Sought>
TimeNs nextBoundOf(const Stream& s, const Entry* self, Sought sought, StartedOp started) {
  TimeNs floor = std::numeric_limits<TimeNs>::min();
  if (const Entry* current = s.current; current != nullptr) {
    if (current->phase == Phase::Timed) {
      floor = current->end_ns;  // already on the timeline, if it belongs there
    } else {
      const TimeNs start = startBoundAt(s, *current, self, 0);
      if (sought(*current) || start == kNever) {
        return started == StartedOp::Announced && current->phase == Phase::Started ? current->start_ns : start;
      }
      floor = start + leastDuration(*current);
    }
  }
  for (std::size_t i = 0; i < s.queue.size(); ++i) {
    const Entry& queued = s.queue.at(i);
    floor = std::max(floor, startBoundAt(s, queued, self, 0));
    if (sought(queued) || floor == kNever) return floor;
    floor += leastDuration(queued);
  }
  return kNever;
}

}  // namespace

TimeNs nextStartBound(const Stream& s, ClassSet classes, const Entry* self) {
  return nextBoundOf(s, self, [&](const Entry& e) { return classes.has(e.op.work_class); }, StartedOp::Bounded);
}

TimeNs peerGroupBound(const Stream& s, std::uint64_t peer_group) {
  const auto meets = [&](const Entry& e) {
    return e.op.peer_group != 0 && (e.op.peer_group == peer_group || e.op.peer_group == kAnyPeerGroup);
  };
  return nextBoundOf(s, nullptr, meets, StartedOp::Announced);
}

}  // namespace simgpu::detail
