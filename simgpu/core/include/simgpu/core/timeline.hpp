// Compute/communication interference on one device, computed from model times alone. While
// Compute and Communication ops overlap, each runs slower by its class's factor (compute's
// scaled by the largest weight among the communication ops running); when an op
// ends, the others speed up again. The ends therefore depend on one another, and they are
// found by playing the ops forward in model time from their starts and amounts of work,
// whatever order their workers happened to report them in (real time, under CPU load, is
// another order). Ops whose end is already final take part with that end.
#pragma once

#include <simgpu/core/stream_op.hpp>

#include <span>

namespace simgpu::detail {

struct TimelineOp {
  WorkClass work_class = WorkClass::Compute;  // Compute or Communication
  TimeNs start = 0;                           // model start
  TimeNs work = 0;                            // modelled duration at full speed
  bool fixed = false;                         // `end` is final (the op has completed)
  TimeNs end = 0;                             // computed for ops that are not fixed
  double weight = 1.0;                        // Communication: StreamOp::interference_weight
  // Scratch for computeEnds().
  double left = 0;
  double finish = 0;
};

struct Slowdowns {
  double compute = 0;        // compute runs (1 + compute * w) times slower while communication of weight w runs
  double communication = 0;  // and communication (1 + communication) times slower under compute
};

// Sets `end` of every op that is not fixed. Fixed ops only take part through their interval.
void computeEnds(std::span<TimelineOp> ops, const Slowdowns& slowdowns);

}  // namespace simgpu::detail
