// Lower bounds on model times that are not known yet, from what the streams hold: the basis
// of every decision the scheduler makes in model time rather than in the order workers happen
// to get there in real time (which CPU load changes).
//
// An op's end under interference depends on every Compute and Communication op that overlaps
// it, so a worker may report its op complete only once no op that could still start before
// that end is missing from its device's timeline; and the compute engine goes to the op that
// asked first in model time only once no other op could have asked earlier. Both ask: how
// early could a stream's next op of some class start? Each phase of an op answers in its own
// way (Phase in machine.hpp): a queued op no earlier than its launch, its stream's clock and
// the bounds of what it waits for; a running body no earlier than the start it was given; a
// timed op at its end. An op whose duration is known at enqueue (StreamOp::duration_ns) ends no
// earlier than that long after its start bound (interference only stretches it), and so do the
// ops behind it start: the bounds of a stream with much queued work reach far, however far
// behind its worker's real work is. Everything a stream holds was enqueued before now, and
// anything enqueued later becomes runnable after now, so an empty stream bounds nothing.
//
// All with Machine::mu held.
#pragma once

#include "machine.hpp"

#include <limits>

namespace simgpu::detail {

inline constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();

// Which work classes a bound is about.
struct ClassSet {
  bool compute = false;
  bool communication = false;
  bool has(WorkClass c) const {
    return (c == WorkClass::Compute && compute) || (c == WorkClass::Communication && communication);
  }
};

// How early the next op of a class in `classes` on `s` that is not on its device's timeline yet
// could start. `self` is the op asking: whatever waits for it cannot start before it ends and
// is answered kNever. kNever when `s` holds no such op.
TimeNs nextStartBound(const Stream& s, ClassSet classes, const Entry* self);

// How early `e`, an op of `s` that has not started yet, could start.
TimeNs startBound(const Stream& s, const Entry& e, const Entry* self);

// How early the next op of `s` of `peer_group` (StreamOp::peer_group, or kAnyPeerGroup) that
// is not timed yet starts, as its peers see it (its own start, before what it learnt from
// them); kNever when `s` holds no such op.
TimeNs peerGroupBound(const Stream& s, std::uint64_t peer_group);

}  // namespace simgpu::detail
