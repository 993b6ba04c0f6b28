// Invariant 2 of the runtime (docs/tuner.md, "The runtime's invariants"), as a property: for
// random programs (kernels, copies, fills, all-reduces, reduce-scatters and all-gathers on
// several streams, events, waits, host syncs, kernels of unknown layout) under random plans,
// every two accesses to a common
// buffer that the original program orders (by stream order, events or host syncs) are still
// ordered in the schedule the scheduler makes, whatever the durations of the ops. The schedule
// is executed on the simulator with random durations; the ordering the original program
// guarantees is computed by an independent vector-clock oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <set>

#include "syncopate/tuner/scheduler.hpp"
#include "syncopate/tuner/simulator.hpp"

namespace syncopate::tuner {
namespace {

constexpr int kStreams = 3;
constexpr int kTensors = 6;
constexpr int kEvents = 3;
constexpr std::uint64_t kTensorBytes = 1024;
constexpr std::uint64_t kBase = 0x100000;
constexpr StreamHandle kComm = 0xC0, kJoin = 0xD0;

std::uint64_t tensorAddress(int t) { return kBase + static_cast<std::uint64_t>(t) * kTensorBytes; }
StreamHandle streamHandle(int s) { return static_cast<StreamHandle>(s + 1); }

// One generated call, and which buffers it touches (all of them: unknown layout).
struct GenCall {
  Call call;
  std::vector<Touch> touches;
  std::set<int> tensors;
  bool touches_all = false;
  bool is_op = false;  // runs on a stream (kernel, copy, fill, collective)
};

// Half are all-reduces in place (half of those over extents that meet other buffers'). The
// others are reduce-scatters and all-gathers: in place
// among 4 ranks (one buffer holds the other: the rank's slice of the whole), or out of place
// between two buffers (a single rank, so that both are whole buffers).
// `kind`: 0-3 as drawn below, or -1 to draw it.
void randomCollective(std::mt19937& rng, CollectiveArgs& a, std::set<int>& tensors, int kind) {
  std::uniform_int_distribution<int> tensor(0, kTensors - 1);
  const int t = tensor(rng);
  tensors.insert(t);
  a.comm = 0x77;
  a.comm_size = 1;
  a.type = trace::CollType::AllReduce;
  a.dtype = trace::DataType::Float32;
  a.op = trace::RedOp::Sum;
  a.count = kTensorBytes / 4;
  a.send = a.recv = tensorAddress(t);
  if (kind < 0) kind = static_cast<int>(rng() % 4);
  if (kind == 0) return;
  if (kind == 1) {
    // Memory an allocator hands out again with another extent: from the buffer's start, half,
    // one and a half or two buffers long.
    const int halves = 1 + static_cast<int>(rng() % 4);
    const int last = t + (halves - 1) / 2;
    if (last >= kTensors) return;
    for (int u = t; u <= last; ++u) tensors.insert(u);
    a.count = static_cast<std::uint64_t>(halves) * kTensorBytes / 2 / 4;
    return;
  }
  a.type = kind == 2 ? trace::CollType::ReduceScatter : trace::CollType::AllGather;
  if (a.type == trace::CollType::AllGather) a.op = trace::RedOp::None;
  if (rng() % 2 == 0) {
    a.comm_size = 4;
    a.count = kTensorBytes / 4 / 4;
    const std::uint64_t slice = tensorAddress(t) + (rng() % 4) * (kTensorBytes / 4);
    (a.type == trace::CollType::ReduceScatter ? a.recv : a.send) = slice;
  } else {
    const int u = tensor(rng);
    tensors.insert(u);
    a.recv = tensorAddress(u);
  }
}

std::vector<GenCall> randomProgram(std::mt19937& rng, int length) {
  std::vector<GenCall> program;
  std::uniform_int_distribution<int> pick(0, 99), stream(0, kStreams - 1), tensor(0, kTensors - 1), event(0, kEvents - 1);
  for (int i = 0; i < length; ++i) {
    GenCall g;
    Call& c = g.call;
    c.id = static_cast<std::uint32_t>(program.size());
    c.stream = streamHandle(stream(rng));
    const int p = pick(rng);
    if (p < 35) {  // kernel on 1-2 tensors (by their base pointer)
      c.kind = CallKind::Kernel;
      const int n = 1 + pick(rng) % 2;
      for (int k = 0; k < n; ++k) {
        const int t = tensor(rng);
        g.tensors.insert(t);
        g.touches.push_back({tensorAddress(t), 0});
      }
      g.is_op = true;
    } else if (p < 60) {  // an all-reduce, a reduce-scatter or an all-gather
      c.kind = CallKind::Collective;
      // Half the reduce-scatters and all-gathers follow one of their kind, as a backward issues
      // one per bucket in a row (what fusion acts on).
      const bool run = i > 0 && program.back().call.kind == CallKind::Collective &&
                       program.back().call.collective.type != trace::CollType::AllReduce && pick(rng) % 2 == 0;
      randomCollective(rng, c.collective, g.tensors,
                       run ? (program.back().call.collective.type == trace::CollType::ReduceScatter ? 2 : 3) : -1);
      if (run) c.stream = program.back().call.stream;
      g.is_op = true;
    } else if (p < 68) {  // copy or fill over a range of two tensors
      c.kind = pick(rng) % 2 ? CallKind::Memcpy : CallKind::Memset;
      const int t = tensor(rng) % (kTensors - 1);
      g.tensors = {t, t + 1};
      g.touches.push_back({tensorAddress(t), 2 * kTensorBytes});
      g.is_op = true;
    } else if (p < 78) {
      c.kind = CallKind::EventRecord;
      c.event = 0xE0 + static_cast<std::uint64_t>(event(rng));
    } else if (p < 88) {
      c.kind = CallKind::StreamWait;
      c.event = 0xE0 + static_cast<std::uint64_t>(event(rng));
    } else if (p < 92) {
      c.kind = CallKind::StreamSync;
    } else if (p < 94) {
      c.kind = CallKind::EventSync;
      c.event = 0xE0 + static_cast<std::uint64_t>(event(rng));
    } else if (p < 95) {
      c.kind = CallKind::DeviceSync;
    } else if (p < 98) {  // a kernel whose parameters are not known
      c.kind = CallKind::Kernel;
      c.unknown_pointers = true;
      g.touches_all = true;
      g.is_op = true;
    } else {
      c.kind = CallKind::StreamQuery;
    }
    program.push_back(std::move(g));
  }
  for (GenCall& g : program) g.call.touches = g.touches;
  return program;
}

// The oracle: which ops the original program orders before which (vector clocks over streams
// and the host, as CUDA defines them).
class Oracle {
 public:
  explicit Oracle(const std::vector<GenCall>& program) {
    std::vector<std::vector<int>> stream_vc(kStreams, std::vector<int>(program.size(), 0));
    std::vector<int> host(program.size(), 0);
    std::map<std::uint64_t, std::vector<int>> events;
    // vc[i][j] = 1 if op j happens before op i. Built incrementally as sets of ops.
    std::vector<std::set<int>> stream_before(kStreams);
    std::set<int> host_before;
    std::map<std::uint64_t, std::set<int>> event_before;
    before_.resize(program.size());
    for (std::size_t i = 0; i < program.size(); ++i) {
      const GenCall& g = program[i];
      const int s = static_cast<int>(g.call.stream) - 1;
      // Whatever the stream does from now on follows what the host has waited for.
      stream_before[s].insert(host_before.begin(), host_before.end());
      switch (g.call.kind) {
        case CallKind::EventRecord: event_before[g.call.event] = stream_before[s]; break;
        case CallKind::StreamWait: {
          auto it = event_before.find(g.call.event);
          if (it != event_before.end()) stream_before[s].insert(it->second.begin(), it->second.end());
          break;
        }
        case CallKind::StreamSync: host_before.insert(stream_before[s].begin(), stream_before[s].end()); break;
        case CallKind::EventSync: {
          auto it = event_before.find(g.call.event);
          if (it != event_before.end()) host_before.insert(it->second.begin(), it->second.end());
          break;
        }
        case CallKind::DeviceSync:
          for (const auto& b : stream_before) host_before.insert(b.begin(), b.end());
          break;
        default: break;
      }
      if (!g.is_op) continue;
      before_[i] = stream_before[s];
      stream_before[s].insert(static_cast<int>(i));
    }
  }
  bool before(int a, int b) const { return before_[static_cast<std::size_t>(b)].count(a) > 0; }

 private:
  std::vector<std::set<int>> before_;
};

// Builds the simulated schedule of the scheduler's actions, with every op tagged by the
// original calls it carries out.
class TaggedProgram : public Executor {
 public:
  SimProgram program;
  std::vector<std::vector<int>> op_calls;  // per sim op: original calls
  std::mt19937* rng = nullptr;
  EventSlot touch_base = 0;  // the first producer event's slot (the scheduler's layout)
  std::uint64_t touch_records = 0;
  std::uint64_t sharded_units = 0;  // reduce-scatters and all-gathers issued as planned
  std::uint64_t fused_sharded_units = 0;  // ... several in one unit

  TaggedProgram() { program.hosts.resize(1); }
  bool prepareEvents(std::uint32_t count) override {
    slot_op_.assign(count, kNone);
    return true;
  }
  StreamHandle communicationStream() override { return kComm; }
  StreamHandle joinStream() override { return kJoin; }
  void passthrough(const Call& c) override {
    switch (c.kind) {
      case CallKind::Kernel:
      case CallKind::Memcpy:
      case CallKind::Memset:
      case CallKind::Collective: op(c.stream, c.kind == CallKind::Collective ? OpClass::Communication : OpClass::Compute, {static_cast<int>(c.id)}); break;
      case CallKind::EventRecord: event_op_[c.event] = marker(c.stream, kNone); break;
      case CallKind::StreamWait: {
        auto it = event_op_.find(c.event);
        marker(c.stream, it == event_op_.end() ? kNone : it->second);
        break;
      }
      case CallKind::StreamSync: waitFor(last(c.stream)); break;
      case CallKind::EventSync: {
        auto it = event_op_.find(c.event);
        if (it != event_op_.end()) waitFor(it->second);
        break;
      }
      case CallKind::DeviceSync:
        for (const auto& [h, o] : last_) waitFor(o);
        break;
      default: break;
    }
  }
  void recordApplicationEvent(const Call& c, StreamHandle s) override { event_op_[c.event] = marker(s, kNone); }
  void issueHeld(const HeldCollective& h) override { op(h.stream, OpClass::Communication, {static_cast<int>(h.call_id)}); }
  void recordEvent(EventSlot e, StreamHandle s) override {
    if (e >= touch_base) ++touch_records;
    slot_op_[e] = marker(s, kNone);
  }
  void waitEvent(StreamHandle s, EventSlot e) override { marker(s, slot_op_[e]); }
  void hostWait(EventSlot e) override { waitFor(slot_op_[e]); }
  void queryWith(const Call&, EventSlot) override {}
  void issueUnit(const UnitIssue& u) override {
    if (u.members.front().args.type != trace::CollType::AllReduce) {
      ++sharded_units;
      if (u.members.size() > 1) ++fused_sharded_units;
    }
    // The members whose elements this part covers.
    std::vector<int> calls;
    std::uint64_t at = 0;
    for (const HeldCollective& m : u.members) {
      if (at < u.offset + u.count && at + m.args.count > u.offset) calls.push_back(static_cast<int>(m.call_id));
      at += m.args.count;
    }
    op(u.stream, OpClass::Communication, calls);
  }
  bool agree(std::uint64_t, std::span<const HeldCollective>, bool) override { return true; }
  void fallback(Fallback, const Call&) override {}

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  std::uint32_t stream(StreamHandle h) {
    auto it = streams_.find(h);
    if (it != streams_.end()) return it->second;
    const std::uint32_t s = program.addStream(0);
    streams_[h] = s;
    return s;
  }
  std::uint32_t last(StreamHandle h) {
    auto it = last_.find(h);
    return it == last_.end() ? kNone : it->second;
  }
  std::uint32_t add(StreamHandle h, OpClass c, double ns, std::uint32_t dep) {
    const std::uint32_t deps[1] = {dep};
    const std::uint32_t o = program.addOp(stream(h), c, ns, dep == kNone ? std::span<const std::uint32_t>{} : std::span(deps));
    program.hosts[0].push_back({SimProgram::StepKind::Issue, 0, o});
    program.hosts[0].push_back({SimProgram::StepKind::Cpu, std::uniform_real_distribution<double>(0, 3)(*rng), 0});
    last_[h] = o;
    op_calls.resize(program.ops.size());
    return o;
  }
  std::uint32_t marker(StreamHandle h, std::uint32_t dep) { return add(h, OpClass::Marker, 0, dep); }
  void op(StreamHandle h, OpClass c, std::vector<int> calls) {
    const std::uint32_t o = add(h, c, std::uniform_real_distribution<double>(1, 50)(*rng), kNone);
    op_calls[o] = std::move(calls);
  }
  void waitFor(std::uint32_t o) {
    if (o != kNone) program.hosts[0].push_back({SimProgram::StepKind::Wait, 0, o});
  }
  std::map<StreamHandle, std::uint32_t> streams_, last_;
  std::map<std::uint64_t, std::uint32_t> event_op_;
  std::vector<std::uint32_t> slot_op_;
};

// Groups as the scheduler flushes them (with no plan), to plan them at random.
class GroupProbe : public TaggedProgram {
 public:
  std::vector<std::vector<CollectiveArgs>> groups;
  bool agree(std::uint64_t, std::span<const HeldCollective> group, bool) override {
    std::vector<CollectiveArgs> g;
    for (const HeldCollective& h : group) g.push_back(h.args);
    groups.push_back(std::move(g));
    return true;
  }
};

ScheduleRules randomRules(std::mt19937& rng, const std::vector<std::vector<CollectiveArgs>>& groups) {
  ScheduleRules rules;
  rules.communication_stream = rng() % 4 != 0;
  rules.per_bucket_waits = rng() % 2 == 0;
  std::set<std::uint64_t> seen;
  for (const auto& members : groups) {
    GroupSignature sig;
    for (const CollectiveArgs& a : members) sig.add(a);
    if (!seen.insert(sig.value()).second) continue;
    GroupPlan g;
    g.signature = sig.value();
    g.members = static_cast<std::uint32_t>(members.size());
    // Most plans are as the search makes them: buckets of one kind of collective, reduce-scatters
    // and all-gathers fused (through the fusion buffer) but in one part; the others mix kinds in
    // a bucket or split reduce-scatters and all-gathers at random, which the scheduler refuses.
    const bool as_searched = rng() % 5 != 0;
    auto kindChanges = [&](std::uint32_t i) {
      const CollectiveArgs &a = members[i - 1], &b = members[i];
      return as_searched && (a.type != b.type || a.comm != b.comm || a.dtype != b.dtype || a.op != b.op);
    };
    for (std::uint32_t i = 0; i < g.members; ++i)
      if (i == 0 || kindChanges(i) || rng() % 3 == 0) g.bucket_first.push_back(i);
    for (std::size_t b = 0; b < g.bucket_first.size(); ++b) {
      const bool whole = as_searched && members[g.bucket_first[b]].type != trace::CollType::AllReduce;
      g.parts.push_back(whole ? 1 : static_cast<std::uint16_t>(1 + rng() % 3));
    }
    for (std::uint16_t b = 0; b < g.bucket_first.size(); ++b)
      for (std::uint16_t p = 0; p < g.parts[b]; ++p) g.order.push_back({b, p});
    std::shuffle(g.order.begin(), g.order.end(), rng);
    rules.groups.push_back(g);
  }
  std::sort(rules.groups.begin(), rules.groups.end(), [](const GroupPlan& a, const GroupPlan& b) { return a.signature < b.signature; });
  return rules;
}

bool conflict(const GenCall& a, const GenCall& b) {
  if (a.touches_all || b.touches_all) return true;
  return std::any_of(a.tensors.begin(), a.tensors.end(), [&](int t) { return b.tensors.count(t) > 0; });
}

// How much of the property a batch of programs exercised (so that it is not vacuous).
struct Coverage {
  int checked_pairs = 0;
  int programs_with_units = 0;
  int programs_with_sharded_units = 0;
  int programs_fusing_sharded_units = 0;  // reduce-scatters or all-gathers fused into one unit
  int programs_merging_buffers = 0;  // a collective's buffer met one of another extent in flight
  int programs_retiring_buffers = 0; // ... or one every stream had waited for
  int programs_wrapping_rings = 0;  // more units, or producer events, than their ring holds
  int programs_disabled_by_capacity = 0;
};

Coverage checkProgramsUnder(const SchedulerLimits& limits) {
  Coverage cov;
  for (unsigned seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    const std::vector<GenCall> program = randomProgram(rng, 60);

    GroupProbe probe;
    probe.rng = &rng;
    {
      const ScheduleRules none;
      Scheduler s(none, probe, limits);
      for (const GenCall& g : program) s.onCall(g.call);
      s.finish();
    }
    const ScheduleRules rules = randomRules(rng, probe.groups);
    TaggedProgram schedule;
    schedule.rng = &rng;
    schedule.touch_base = limits.held + limits.units + 1;
    Scheduler s(rules, schedule, limits);
    for (const GenCall& g : program) s.onCall(g.call);
    s.finish();
    if (s.stats().units > 0) ++cov.programs_with_units;
    if (schedule.sharded_units > 0) ++cov.programs_with_sharded_units;
    if (schedule.fused_sharded_units > 0) ++cov.programs_fusing_sharded_units;
    if (s.stats().buffers_merged > 0) ++cov.programs_merging_buffers;
    if (s.stats().buffers_retired > 0) ++cov.programs_retiring_buffers;
    if (s.stats().units > limits.units || schedule.touch_records > limits.touch_events) ++cov.programs_wrapping_rings;
    if (s.stats().fallbacks[static_cast<std::size_t>(Fallback::CapacityExceeded)] > 0) ++cov.programs_disabled_by_capacity;

    const SimResult sim = simulate(schedule.program);
    EXPECT_TRUE(sim.ok) << "seed " << seed << ": " << sim.error;
    if (!sim.ok) continue;
    // Each original op's span in the schedule (a collective may be spread over several units).
    std::vector<double> start(program.size(), -1), end(program.size(), -1);
    for (std::size_t o = 0; o < schedule.op_calls.size(); ++o) {
      for (int c : schedule.op_calls[o]) {
        const auto i = static_cast<std::size_t>(c);
        start[i] = start[i] < 0 ? sim.start[o] : std::min(start[i], sim.start[o]);
        end[i] = std::max(end[i], sim.end[o]);
      }
    }
    const Oracle oracle(program);
    for (std::size_t b = 0; b < program.size(); ++b) {
      if (!program[b].is_op) continue;
      EXPECT_GE(start[b], 0) << "seed " << seed << ": call " << b << " was never issued";
      for (std::size_t a = 0; a < b; ++a) {
        if (!program[a].is_op || !oracle.before(static_cast<int>(a), static_cast<int>(b)) || !conflict(program[a], program[b])) {
          continue;
        }
        ++cov.checked_pairs;
        EXPECT_LE(end[a], start[b] + 1e-9) << "seed " << seed << ": call " << a << " (" << toString(program[a].call.kind)
                                           << ") must end before call " << b << " (" << toString(program[b].call.kind)
                                           << ") starts";
      }
    }
  }
  return cov;
}

TEST(DependencyProperty, OrderedConflictingAccessesStayOrderedUnderEveryPlan) {
  SchedulerLimits limits;
  limits.streams = 8;
  limits.tensors = 16;
  limits.held = 8;
  limits.units = 16;
  limits.touch_events = 16;
  limits.app_events = 8;
  const Coverage cov = checkProgramsUnder(limits);
  EXPECT_GT(cov.checked_pairs, 5000);
  EXPECT_GT(cov.programs_with_units, 250);
  EXPECT_GT(cov.programs_with_sharded_units, 250);
  EXPECT_GT(cov.programs_fusing_sharded_units, 100) << cov.programs_fusing_sharded_units;
  EXPECT_GT(cov.programs_merging_buffers, 150);
  EXPECT_GT(cov.programs_retiring_buffers, 150);
}

// The same property where the rings are smaller than what one flush issues (done events reused
// before they are waited for, producer events overwritten before their all-reduce is flushed)
// and where the buffer and event tables overflow mid-program (the plan is disabled there, what
// is held is issued in order and everything in flight drained).
TEST(DependencyProperty, OrderedConflictingAccessesStayOrderedWhenRingsWrapAndTablesOverflow) {
  SchedulerLimits limits;
  limits.streams = 8;
  limits.tensors = 5;     // of the programs' 6 buffers
  limits.held = 8;
  limits.units = 2;
  limits.touch_events = 3;
  limits.app_events = 2;  // of the programs' 3 events
  const Coverage cov = checkProgramsUnder(limits);
  EXPECT_GT(cov.checked_pairs, 5000);
  EXPECT_GT(cov.programs_wrapping_rings, 250);
  EXPECT_GT(cov.programs_disabled_by_capacity, 200);
}

}  // namespace
}  // namespace syncopate::tuner
