#include "dp_trainer/stream_simulation.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace dp_trainer::simulation {

double runStreams(const std::vector<std::vector<Op>>& streams, double compute_slowdown, double communication_slowdown) {
  struct Cursor {
    std::size_t next = 0;
    bool active = false;
    double remaining = 0.0;
  };
  std::vector<Cursor> cursors(streams.size());
  std::vector<std::vector<bool>> done(streams.size());
  for (std::size_t s = 0; s < streams.size(); ++s) done[s].assign(streams[s].size(), false);
  double now = 0.0;

  const auto ready = [&](const Op& op) {
    return op.wait_stream < 0 || done.at(static_cast<std::size_t>(op.wait_stream)).at(static_cast<std::size_t>(op.wait_op));
  };
  for (;;) {
    // Start whatever can start; zero-length ops end at once and may unblock others.
    for (bool progressed = true; progressed;) {
      progressed = false;
      for (std::size_t s = 0; s < streams.size(); ++s) {
        Cursor& c = cursors[s];
        while (!c.active && c.next < streams[s].size() && ready(streams[s][c.next])) {
          const Op& op = streams[s][c.next];
          if (op.ns > 0.0) {
            c.active = true;
            c.remaining = op.ns;
          } else {
            done[s][c.next++] = true;
            progressed = true;
          }
        }
      }
    }
    bool any_compute = false, any_communication = false, any_active = false;
    for (std::size_t s = 0; s < streams.size(); ++s) {
      if (!cursors[s].active) continue;
      any_active = true;
      const Work work = streams[s][cursors[s].next].work;
      any_compute |= work == Work::Compute;
      any_communication |= work == Work::Communication;
    }
    if (!any_active) {
      for (std::size_t s = 0; s < streams.size(); ++s) {
        if (cursors[s].next < streams[s].size()) throw std::logic_error("stream simulation: ops wait forever");
      }
      return now;
    }
    const auto rate = [&](Work work) {
      if (work == Work::Compute && any_communication) return 1.0 / (1.0 + compute_slowdown);
      if (work == Work::Communication && any_compute) return 1.0 / (1.0 + communication_slowdown);
      return 1.0;
    };
    double step = std::numeric_limits<double>::infinity();
    for (std::size_t s = 0; s < streams.size(); ++s) {
      if (cursors[s].active) step = std::min(step, cursors[s].remaining / rate(streams[s][cursors[s].next].work));
    }
    now += step;
    for (std::size_t s = 0; s < streams.size(); ++s) {
      Cursor& c = cursors[s];
      if (!c.active) continue;
      c.remaining -= step * rate(streams[s][c.next].work);
      if (c.remaining <= 1e-9) {
        c.active = false;
        done[s][c.next++] = true;
      }
    }
  }
}

}  // namespace dp_trainer::simulation
