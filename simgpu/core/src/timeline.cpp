#include "simgpu/core/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace simgpu::detail {

void computeEnds(std::span<TimelineOp> ops, const Slowdowns& slowdowns) {
  // Times are played relative to the earliest open op, in doubles (exact for integers up to
  // 2^53 ns), and rounded to whole nanoseconds once per end.
  TimeNs base = std::numeric_limits<TimeNs>::max();
  for (const TimelineOp& op : ops)
    if (!op.fixed) base = std::min(base, op.start);
  if (base == std::numeric_limits<TimeNs>::max()) return;
  const auto rel = [base](TimeNs t) { return static_cast<double>(t - base); };
  for (TimelineOp& op : ops) op.left = op.fixed ? 0.0 : static_cast<double>(op.work);

  constexpr double kNone = std::numeric_limits<double>::infinity();
  double t = 0;
  for (;;) {
    bool compute = false;
    bool communication = false;
    // The largest, not the sum: compute shares its SMs with the widest collective, and with
    // weights of 1 (no channel model) the rate is the one of a single weight, bit for bit.
    double weight = 0;
    for (const TimelineOp& op : ops) {
      const bool running = op.fixed ? rel(op.start) <= t && t < rel(op.end) : rel(op.start) <= t && op.left > 0;
      if (!running) continue;
      if (op.work_class == WorkClass::Compute) {
        compute = true;
      } else {
        communication = true;
        weight = std::max(weight, op.weight);
      }
    }
    const double compute_rate = communication ? 1.0 / (1.0 + slowdowns.compute * weight) : 1.0;
    const double communication_rate = compute ? 1.0 / (1.0 + slowdowns.communication) : 1.0;
    const auto rateOf = [&](const TimelineOp& op) {
      return op.work_class == WorkClass::Compute ? compute_rate : communication_rate;
    };

    double next = kNone;
    for (TimelineOp& op : ops) {
      const double start = rel(op.start);
      if (op.fixed) {
        if (start > t) next = std::min(next, start);
        else if (rel(op.end) > t) next = std::min(next, rel(op.end));
      } else if (op.left > 0) {
        op.finish = start > t ? kNone : t + op.left / rateOf(op);
        next = std::min(next, start > t ? start : op.finish);
      }
    }
    if (next == kNone) return;

    for (TimelineOp& op : ops) {
      if (op.fixed || op.left <= 0 || rel(op.start) > t) continue;
      if (op.finish <= next) {
        op.left = 0;
        op.end = base + static_cast<TimeNs>(std::llround(op.finish));
      } else {
        op.left -= (next - t) * rateOf(op);
      }
    }
    t = next;
  }
}

}  // namespace simgpu::detail
