#include "syncopate/tuner/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>

#include <fmt/format.h>

namespace syncopate::tuner {

std::uint32_t SimProgram::addStream(std::uint32_t rank, std::int32_t priority) {
  streams.push_back({rank, priority});
  if (hosts.size() <= rank) hosts.resize(rank + 1);
  return static_cast<std::uint32_t>(streams.size() - 1);
}

std::uint32_t SimProgram::addOp(std::uint32_t stream, OpClass c, double work_ns,
                                std::span<const std::uint32_t> waits_for, std::uint32_t match, std::int32_t tag) {
  Op op;
  op.stream = stream;
  op.op_class = c;
  op.work_ns = work_ns;
  op.match = match;
  op.tag = tag;
  op.dep_begin = static_cast<std::uint32_t>(deps.size());
  op.dep_count = static_cast<std::uint32_t>(waits_for.size());
  deps.insert(deps.end(), waits_for.begin(), waits_for.end());
  ops.push_back(op);
  return static_cast<std::uint32_t>(ops.size() - 1);
}

namespace {

constexpr std::uint32_t kNoHolder = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kNoConnection = std::numeric_limits<std::uint32_t>::max();

bool interferes(OpClass c) { return c == OpClass::Compute || c == OpClass::Communication; }

class Simulation {
 public:
  explicit Simulation(const SimProgram& p) : p_(p) {}

  SimResult run() {
    prepare();
    for (std::uint32_t r = 0; r < p_.hosts.size(); ++r) advanceHost(r);
    drainWork();
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      now_ = e.t;
      if (e.type == EventType::OpEnd) {
        if (e.version != op_[e.id].version || op_[e.id].done) continue;
        finish(e.id);
      } else {
        queueStream(e.id);
      }
      drainWork();
    }
    return result();
  }

 private:
  enum class EventType : std::uint8_t { TryStream = 0, OpEnd = 1 };
  struct Event {
    double t;
    std::uint64_t seq;
    EventType type;
    std::uint32_t id;
    std::uint32_t version;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  struct OpState {
    bool released = false, started = false, done = false, engine_waiting = false, match_ready = false;
    double release = 0, start = 0, end = 0;
    double remaining = 0, rate = 1;
    std::uint32_t version = 0;
    std::uint32_t pending_deps = 0;
  };
  struct Device {  // one per rank
    std::uint32_t engine_holder = kNoHolder;
    std::vector<std::uint32_t> engine_waiters;  // ops
    std::uint64_t tickets = 0;
    std::vector<std::uint32_t> active;          // interfering ops running
    double updated = 0;
  };
  struct Host {
    std::size_t step = 0;
    double t = 0;
    bool blocked = false;
    bool finished = false;
  };

  void prepare() {
    const std::size_t n = p_.ops.size();
    op_.assign(n, {});
    stream_ops_.assign(p_.streams.size(), {});
    for (std::uint32_t i = 0; i < n; ++i) stream_ops_[p_.ops[i].stream].push_back(i);
    stream_head_.assign(p_.streams.size(), 0);
    // Dependents, for wake-ups.
    dependents_begin_.assign(n + 1, 0);
    for (std::uint32_t i = 0; i < n; ++i) {
      const SimProgram::Op& o = p_.ops[i];
      op_[i].pending_deps = o.dep_count;
      for (std::uint32_t k = 0; k < o.dep_count; ++k) ++dependents_begin_[p_.deps[o.dep_begin + k] + 1];
    }
    for (std::size_t i = 0; i < n; ++i) dependents_begin_[i + 1] += dependents_begin_[i];
    dependents_.assign(p_.deps.size(), 0);
    std::vector<std::uint32_t> fill(dependents_begin_.begin(), dependents_begin_.end() - 1);
    for (std::uint32_t i = 0; i < n; ++i) {
      const SimProgram::Op& o = p_.ops[i];
      for (std::uint32_t k = 0; k < o.dep_count; ++k) dependents_[fill[p_.deps[o.dep_begin + k]]++] = i;
    }
    std::uint32_t matches = 0;
    for (const SimProgram::Op& o : p_.ops)
      if (o.match != kNoMatch) matches = std::max(matches, o.match + 1);
    match_expected_.assign(matches, 0);
    match_ready_.assign(matches, 0);
    match_ops_.assign(matches, {});
    for (std::uint32_t i = 0; i < n; ++i)
      if (p_.ops[i].match != kNoMatch) {
        ++match_expected_[p_.ops[i].match];
        match_ops_[p_.ops[i].match].push_back(i);
      }
    devices_.assign(p_.hosts.size(), {});
    hosts_.assign(p_.hosts.size(), {});
    step_end_.resize(p_.hosts.size());
    for (std::size_t r = 0; r < p_.hosts.size(); ++r) step_end_[r].assign(p_.hosts[r].size(), 0);
    host_waiters_.assign(n, {});
    engine_ticket_.assign(n, 0);
    std::uint32_t barriers = 0;
    for (const auto& steps : p_.hosts)
      for (const SimProgram::Step& s : steps)
        if (s.kind == SimProgram::StepKind::Barrier) barriers = std::max(barriers, s.target + 1);
    barrier_arrived_.assign(barriers, 0);
    barrier_time_.assign(barriers, 0);
    barrier_waiting_.assign(barriers, {});
    prepareConnections();
  }

  // Each stream's work queue: a rank's streams in turn, when the queues are fewer than streams.
  void prepareConnections() {
    connection_of_.assign(p_.streams.size(), kNoConnection);
    if (p_.connections == 0) return;
    std::vector<std::uint32_t> streams_of_rank(p_.hosts.size(), 0);
    for (std::uint32_t s = 0; s < p_.streams.size(); ++s) {
      const std::uint32_t r = p_.streams[s].rank;
      connection_of_[s] = r * p_.connections + streams_of_rank[r]++ % p_.connections;
    }
    queued_.assign(p_.hosts.size() * p_.connections, {});
    dispatched_.assign(p_.ops.size(), false);
  }

  // Whether op `o` is at the head of its work queue (always, with no shared queues).
  bool atQueueHead(std::uint32_t o) const {
    const std::uint32_t c = connection_of_[p_.ops[o].stream];
    return c == kNoConnection || queued_[c].front() == o;
  }

  // Op `o` leaves its work queue: the ops behind it may follow.
  void leaveQueue(std::uint32_t o) {
    const std::uint32_t c = connection_of_[p_.ops[o].stream];
    if (c == kNoConnection) return;
    dispatched_[o] = true;
    auto& queue = queued_[c];
    while (!queue.empty() && dispatched_[queue.front()]) queue.pop_front();
    if (!queue.empty()) queueStream(p_.ops[queue.front()].stream);
  }

  void push(double t, EventType type, std::uint32_t id, std::uint32_t version = 0) {
    events_.push({t, seq_++, type, id, version});
  }

  void queueStream(std::uint32_t s) { work_.push_back(s); }

  void drainWork() {
    // First queued, first tried: simultaneous arrivals reach the engine in issue order.
    while (!work_.empty()) {
      const std::uint32_t s = work_.front();
      work_.pop_front();
      tryStart(s);
    }
  }

  std::uint32_t rankOf(std::uint32_t op) const { return p_.streams[p_.ops[op].stream].rank; }

  // --- hosts ---

  void advanceHost(std::uint32_t r) {
    Host& h = hosts_[r];
    const auto& steps = p_.hosts[r];
    h.blocked = false;
    while (h.step < steps.size()) {
      const SimProgram::Step& st = steps[h.step];
      switch (st.kind) {
        case SimProgram::StepKind::Cpu: h.t += st.ns; break;
        case SimProgram::StepKind::Issue: {
          OpState& o = op_[st.target];
          o.released = true;
          if (const std::uint32_t c = connection_of_[p_.ops[st.target].stream]; c != kNoConnection) {
            queued_[c].push_back(st.target);
          }
          o.release = std::max(h.t + p_.launch_latency_ns, p_.ops[st.target].not_before_ns);
          if (o.release > now_) {
            push(o.release, EventType::TryStream, p_.ops[st.target].stream);
          } else {
            queueStream(p_.ops[st.target].stream);
          }
          break;
        }
        case SimProgram::StepKind::Wait: {
          const OpState& o = op_[st.target];
          if (!o.done) {
            host_waiters_[st.target].push_back(r);
            h.blocked = true;
            return;
          }
          h.t = std::max(h.t, o.end);
          break;
        }
        case SimProgram::StepKind::Barrier: {
          const std::uint32_t b = st.target;
          barrier_time_[b] = std::max(barrier_time_[b], h.t);
          barrier_waiting_[b].push_back(r);
          if (++barrier_arrived_[b] < p_.hosts.size()) {
            h.blocked = true;
            ++h.step;  // its end time is set when the barrier completes
            return;
          }
          const double t = barrier_time_[b] + st.ns;
          h.t = t;
          for (std::uint32_t w : barrier_waiting_[b]) {
            if (w == r) continue;
            hosts_[w].t = t;
            step_end_[w][hosts_[w].step - 1] = t;
            advanceHost(w);  // recursion at most one level per rank
          }
          break;
        }
      }
      step_end_[r][h.step] = h.t;
      ++h.step;
    }
    h.finished = true;
  }

  // --- GPU ---

  void tryStart(std::uint32_t s) {
    auto& list = stream_ops_[s];
    std::size_t& head = stream_head_[s];
    while (head < list.size() && op_[list[head]].done) ++head;
    if (head >= list.size()) return;
    const std::uint32_t o = list[head];
    OpState& st = op_[o];
    if (st.started || st.engine_waiting || st.match_ready) return;
    if (!st.released) return;
    if (st.release > now_) return;  // its TryStream event comes at release time
    if (st.pending_deps > 0) return;
    if (!atQueueHead(o)) return;  // tried again when the op ahead of it leaves the queue
    leaveQueue(o);
    const SimProgram::Op& op = p_.ops[o];
    if (op.op_class == OpClass::Marker) {
      st.started = true;
      st.start = now_;
      finish(o);
      return;
    }
    if (op.match != kNoMatch) {
      st.match_ready = true;
      if (++match_ready_[op.match] < match_expected_[op.match]) return;
      for (std::uint32_t m : match_ops_[op.match]) begin(m);
      return;
    }
    if (op.op_class == OpClass::Compute) {
      Device& d = devices_[rankOf(o)];
      if (d.engine_holder != kNoHolder) {
        st.engine_waiting = true;
        engine_ticket_[o] = ++d.tickets;
        d.engine_waiters.push_back(o);
        return;
      }
      d.engine_holder = o;
    }
    begin(o);
  }

  void advanceActive(Device& d) {
    const double dt = now_ - d.updated;
    if (dt > 0)
      for (std::uint32_t a : d.active) op_[a].remaining = std::max(0.0, op_[a].remaining - dt * op_[a].rate);
    d.updated = now_;
  }

  void retarget(Device& d) {
    int compute = 0, communication = 0;
    double weight = 0;  // the largest interference weight of the communication running
    for (std::uint32_t a : d.active) {
      if (p_.ops[a].op_class == OpClass::Compute) {
        ++compute;
      } else {
        ++communication;
        weight = std::max(weight, p_.ops[a].interference);
      }
    }
    for (std::uint32_t a : d.active) {
      const bool is_compute = p_.ops[a].op_class == OpClass::Compute;
      const bool overlapped = is_compute ? communication > 0 : compute > 0;
      const double slowdown = is_compute ? p_.compute_slowdown * weight : p_.communication_slowdown;
      const double rate = overlapped ? 1.0 / (1.0 + slowdown) : 1.0;
      OpState& st = op_[a];
      if (rate == st.rate && st.version > 0) continue;
      st.rate = rate;
      ++st.version;
      push(now_ + st.remaining / rate, EventType::OpEnd, a, st.version);
    }
  }

  void begin(std::uint32_t o) {
    OpState& st = op_[o];
    st.started = true;
    st.engine_waiting = false;
    st.start = now_;
    st.remaining = p_.ops[o].work_ns;
    st.rate = 1.0;
    const OpClass c = p_.ops[o].op_class;
    if (interferes(c)) {
      Device& d = devices_[rankOf(o)];
      advanceActive(d);
      d.active.push_back(o);
      st.version = 0;
      retarget(d);
    } else {
      ++st.version;
      push(now_ + st.remaining, EventType::OpEnd, o, st.version);
    }
  }

  void finish(std::uint32_t o) {
    OpState& st = op_[o];
    st.done = true;
    st.end = now_;
    const SimProgram::Op& op = p_.ops[o];
    const std::uint32_t r = rankOf(o);
    Device& d = devices_[r];
    if (interferes(op.op_class)) {
      advanceActive(d);
      std::erase(d.active, o);
      retarget(d);
    }
    if (d.engine_holder == o) {
      d.engine_holder = kNoHolder;
      if (!d.engine_waiters.empty()) {
        // The waiter on the highest-priority stream, then the first to arrive.
        auto best = std::min_element(d.engine_waiters.begin(), d.engine_waiters.end(), [&](std::uint32_t a, std::uint32_t b) {
          const std::int32_t pa = p_.streams[p_.ops[a].stream].priority, pb = p_.streams[p_.ops[b].stream].priority;
          return pa != pb ? pa < pb : engine_ticket_[a] < engine_ticket_[b];
        });
        const std::uint32_t next = *best;
        d.engine_waiters.erase(best);
        d.engine_holder = next;
        begin(next);
      }
    }
    queueStream(op.stream);
    for (std::uint32_t k = dependents_begin_[o]; k < dependents_begin_[o + 1]; ++k) {
      const std::uint32_t dep = dependents_[k];
      if (--op_[dep].pending_deps == 0) queueStream(p_.ops[dep].stream);
    }
    auto waiters = std::move(host_waiters_[o]);
    host_waiters_[o].clear();
    for (std::uint32_t w : waiters) {
      hosts_[w].t = std::max(hosts_[w].t, now_);
      step_end_[w][hosts_[w].step] = hosts_[w].t;
      ++hosts_[w].step;
      advanceHost(w);
    }
  }

  SimResult result() {
    SimResult r;
    const std::size_t n = op_.size();
    r.start.resize(n);
    r.end.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      r.start[i] = op_[i].start;
      r.end[i] = op_[i].end;
    }
    r.step_end = step_end_;
    r.host_end.resize(hosts_.size());
    for (std::size_t h = 0; h < hosts_.size(); ++h) r.host_end[h] = hosts_[h].t;
    for (std::size_t i = 0; i < n; ++i) {
      if (!op_[i].done) {
        r.error = fmt::format("op {} on stream {} of rank {} never ran ({}): the schedule deadlocks", i,
                              p_.ops[i].stream, rankOf(static_cast<std::uint32_t>(i)),
                              !op_[i].released             ? "never issued"
                              : op_[i].match_ready         ? "a collective some rank never reached"
                              : op_[i].pending_deps > 0    ? "waits for an op that never ends"
                                                           : "its stream is blocked");
        return r;
      }
    }
    for (std::size_t h = 0; h < hosts_.size(); ++h) {
      if (!hosts_[h].finished) {
        r.error = fmt::format("the host of rank {} is blocked at step {} forever: the schedule deadlocks", h,
                              hosts_[h].step);
        return r;
      }
    }
    r.ok = true;
    return r;
  }

  const SimProgram& p_;
  double now_ = 0;
  std::uint64_t seq_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::deque<std::uint32_t> work_;
  std::vector<OpState> op_;
  std::vector<std::vector<std::uint32_t>> stream_ops_;
  std::vector<std::size_t> stream_head_;
  std::vector<std::uint32_t> dependents_begin_, dependents_;
  std::vector<std::uint32_t> match_expected_, match_ready_;
  std::vector<std::vector<std::uint32_t>> match_ops_;
  std::vector<Device> devices_;
  std::vector<Host> hosts_;
  std::vector<std::vector<double>> step_end_;
  std::vector<std::vector<std::uint32_t>> host_waiters_;
  std::vector<std::uint32_t> barrier_arrived_;
  std::vector<double> barrier_time_;
  std::vector<std::vector<std::uint32_t>> barrier_waiting_;
  std::vector<std::uint64_t> engine_ticket_;
  std::vector<std::uint32_t> connection_of_;       // per stream: rank * connections + queue, or kNoConnection
  std::vector<std::deque<std::uint32_t>> queued_;  // per work queue: its ops in issue order, not yet left
  std::vector<bool> dispatched_;                   // per op: it has left its work queue
};

}  // namespace

SimResult simulate(const SimProgram& program) { return Simulation(program).run(); }

}  // namespace syncopate::tuner
