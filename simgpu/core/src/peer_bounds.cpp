// What a rank tells its peers of when its next op of a peer group could start, and what a
// timing step learns from theirs (stream_op.hpp, "Waiting for peers without holding the device
// up").
#include "bounds.hpp"
#include "clock.hpp"
#include "machine.hpp"

#include <algorithm>

namespace simgpu {

void raiseStartBound(const OpContext& ctx, TimeNs bound) {
  if (ctx.op == nullptr) return;
  detail::Machine& m = detail::machine();
  std::lock_guard lock(m.mu);
  // The op is its stream's current one for as long as its timing step runs, which is when
  // this is called.
  auto& e = *static_cast<detail::Entry*>(ctx.op);
  if (e.phase != detail::Phase::Started || bound <= std::max(e.start_ns, e.start_floor)) return;
  e.start_floor = bound;
  detail::boundsMoved(m);
}

TimeNs peerGroupStartBound(int device, std::uint64_t peer_group) {
  detail::Machine* m = detail::machineIfCreated();
  if (m == nullptr) return 0;
  std::lock_guard lock(m->mu);
  // Anything enqueued from now on is runnable no earlier than a launch latency from now.
  TimeNs bound = nowNs() + m->profile.device.launch_latency_ns;
  if (device < 0 || device >= static_cast<int>(m->devices.size())) return bound;
  for (const auto& s : m->devices[static_cast<std::size_t>(device)]->streams) {
    bound = std::min(bound, detail::peerGroupBound(*s, peer_group));
  }
  return bound;
}

}  // namespace simgpu
