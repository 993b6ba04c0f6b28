#include "syncopate/tuner/what_if.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "syncopate/trace/hash.hpp"
#include "program_builder.hpp"
#include "syncopate/analyzer/collectives.hpp"

namespace syncopate::tuner {

namespace {

using analyzer::Index;

bool blocking(const Call& c) {
  switch (c.kind) {
    case CallKind::StreamSync:
    case CallKind::EventSync:
    case CallKind::DeviceSync: return true;
    case CallKind::Memcpy:
    case CallKind::Memset: return c.synchronous;
    default: return false;
  }
}

// What an iteration of a rank did, as a hash of its calls: iterations with the same
// signature can be simulated one after another.
std::map<std::int64_t, std::uint64_t> signatures(const analyzer::RunModel& m, const RecordedRank& rank) {
  std::map<std::int64_t, std::uint64_t> out;
  for (const RecordedCall& rc : rank.calls) {
    if (rc.iteration < 0) continue;
    auto [it, inserted] = out.emplace(rc.iteration, trace::kFnvOffset);
    const std::uint64_t fields[] = {static_cast<std::uint64_t>(rc.call.kind),
                                    rc.op == analyzer::kNone ? 0 : trace::fnv1a(m.str(m.ops.name[rc.op])),
                                    rc.call.collective.count};
    it->second = trace::fnv1a(it->second, fields, sizeof(fields));
  }
  return out;
}

// The scheduler's tables, sized for this run: the runtime's capacities, except tables the run
// could never fill (so predictions stay cheap without changing any decision).
SchedulerLimits limitsFor(const RecordedRank& rank) {
  SchedulerLimits l;
  std::set<std::pair<std::uint64_t, std::uint64_t>> buffers;
  std::set<std::uint64_t> events;
  for (const RecordedCall& rc : rank.calls) {
    if (rc.call.kind == CallKind::Collective) {
      buffers.emplace(rc.call.collective.send, rc.call.collective.send_bytes());
      buffers.emplace(rc.call.collective.recv, rc.call.collective.recv_bytes());
    }
    if (rc.call.event != 0) events.insert(rc.call.event);
  }
  l.tensors = static_cast<std::uint32_t>(std::min<std::size_t>(l.tensors, buffers.size() + 16));
  l.app_events = static_cast<std::uint32_t>(std::min<std::size_t>(l.app_events, events.size() + 16));
  return l;
}

// The window of a run whose schedules can be predicted: the latest (at most `size`) of the
// longest run of consecutive steady iterations (after the first, with the calls each rank
// makes most often, on every rank). The first fills the pipeline, the last closes the one
// before it.
trace::Result<std::pair<std::int64_t, std::int64_t>> steadyWindow(const analyzer::RunModel& m,
                                                                  const analyzer::Analysis& a, const RecordedRun& calls,
                                                                  int size) {
  std::vector<std::int64_t> steady;
  {
    std::vector<std::map<std::int64_t, std::uint64_t>> sigs;
    std::vector<std::uint64_t> usual;
    for (const RecordedRank& rank : calls.ranks) {
      sigs.push_back(signatures(m, rank));
      std::map<std::uint64_t, int> counts;
      for (const auto& [n, s] : sigs.back())
        if (n != a.iterations.numbers.front()) ++counts[s];
      std::uint64_t best = 0;
      int best_count = 0;
      for (const auto& [s, c] : counts)
        if (c > best_count) best = s, best_count = c;
      usual.push_back(best);
    }
    for (std::int64_t n : a.iterations.numbers) {
      if (n == a.iterations.numbers.front()) continue;
      bool ok = true;
      for (std::size_t r = 0; r < sigs.size() && ok; ++r) {
        auto it = sigs[r].find(n);
        ok = it != sigs[r].end() && it->second == usual[r];
      }
      if (ok) steady.push_back(n);
    }
  }
  // The longest run of consecutive steady iterations.
  std::size_t best_begin = 0, best_len = 0;
  for (std::size_t i = 0; i < steady.size();) {
    std::size_t j = i + 1;
    while (j < steady.size() && steady[j] == steady[j - 1] + 1) ++j;
    if (j - i > best_len) best_begin = i, best_len = j - i;
    i = j;
  }
  if (best_len < 3) {
    return trace::failure(fmt::format(
        "the run has {} consecutive steady iterations after the first; the model needs 3 with the same calls on "
        "every rank: record more iterations",
        best_len));
  }
  // The latest iterations of that run: start-up effects (first launches, allocations, the
  // launcher still settling) fade with time.
  const std::size_t len = std::min<std::size_t>(best_len, static_cast<std::size_t>(size));
  return std::make_pair(steady[best_begin + best_len - len], steady[best_begin + best_len - 1]);
}

// The iterations every rank with any iteration has a measured window of, ascending (a process
// of an import that ran no step, a launcher say, is replayed without one).
std::vector<std::int64_t> iterationsOnEveryRank(const analyzer::Analysis& a) {
  std::map<std::int64_t, std::size_t> count;
  std::set<analyzer::Index> ranks;
  for (const analyzer::RankIterationMetrics& ri : a.rank_iterations) {
    ++count[ri.window.number];
    ranks.insert(ri.rank);
  }
  std::vector<std::int64_t> out;
  for (const auto& [n, c] : count)
    if (c == ranks.size()) out.push_back(n);
  return out;
}

// Communicators some of whose ranks are not in the run (one rank's trace of a larger job):
// their calls are taken as measured, the waits for the absent ranks included.
std::set<std::uint64_t> partialCommunicators(const RecordedRun& calls) {
  std::map<std::uint64_t, std::pair<std::set<analyzer::Index>, std::int32_t>> members;
  for (const RecordedRank& rank : calls.ranks) {
    for (const RecordedCall& rc : rank.calls) {
      if (rc.call.kind != CallKind::Collective) continue;
      auto& [present, size] = members[rc.call.collective.comm];
      present.insert(rank.rank);
      size = std::max(size, rc.call.collective.comm_size);
    }
  }
  std::set<std::uint64_t> out;
  for (const auto& [comm, seen] : members)
    if (static_cast<std::int32_t>(seen.first.size()) < seen.second) out.insert(comm);
  return out;
}

// When each transfer with absent ranks started: the collectives of those communicators, and the
// transfers the trace gives no arguments for (their peers are unknown).
std::unordered_map<Index, std::int64_t> absentPeersStarts(const analyzer::RunModel& m, const RecordedRun& calls,
                                                         const std::set<std::uint64_t>& partial) {
  std::unordered_map<Index, std::int64_t> out;
  for (const RecordedRank& rank : calls.ranks) {
    for (const RecordedCall& rc : rank.calls) {
      if (rc.op == analyzer::kNone) continue;
      const bool collective = rc.call.kind == CallKind::Collective;
      const trace::OpKind kind = m.ops.kind[rc.op];
      const bool transfer = kind == trace::OpKind::Collective || kind == trace::OpKind::P2P;
      if ((collective && partial.count(rc.call.collective.comm) != 0) || (transfer && !collective)) {
        out[rc.op] = m.ops.start[rc.op];
      }
    }
  }
  return out;
}

}  // namespace

std::int32_t WhatIfModel::participants(const CollectiveArgs& args) const {
  if (!mirror_absent_) return args.comm_size;
  auto it = modelled_members_.find(args.comm);
  return it == modelled_members_.end() ? 1 : it->second;
}

double WhatIfModel::collectiveNs(const CollectiveArgs& a, Index fallback_op) const {
  if (fallback_op != analyzer::kNone && partial_comms_.count(a.comm) != 0) return standalone_[fallback_op];
  const double fitted = comm_.durationNs(static_cast<std::int64_t>(a.comm), a.type, a.comm_size, a.count, a.dtype);
  if (fitted >= 0) return fitted;
  return fallback_op == analyzer::kNone ? 0.0 : standalone_[fallback_op];
}

void WhatIfModel::setChannels(RecordedChannels channels) {
  channels_ = std::move(channels);
  channels_.fitted.clear();
  std::map<std::int64_t, std::vector<ChannelSample>> samples;  // per communicator
  for (const RecordedRank& rank : calls_.ranks) {
    for (const RecordedCall& rc : rank.calls) {
      if (rc.call.kind != CallKind::Collective || rc.op == analyzer::kNone || rc.op >= channels_.per_op.size() ||
          channels_.per_op[rc.op] == 0) {
        continue;
      }
      const CollectiveArgs& a = rc.call.collective;
      const CommFit* fit = comm_.find(static_cast<std::int64_t>(a.comm));
      const std::int64_t bytes = analyzer::ncclTestsBytes(a.type, static_cast<std::int64_t>(a.count), a.dtype, a.comm_size);
      if (fit == nullptr || bytes <= 0) continue;
      samples[fit->comm_id].push_back({channels_.per_op[rc.op],
                                       analyzer::busBandwidthFactor(a.type, a.comm_size) * static_cast<double>(bytes),
                                       standalone_[rc.op] - fit->latency_ns * ringSteps(a.type, a.comm_size)});
    }
  }
  for (const auto& [comm, of_comm] : samples) {
    if (auto fit = fitChannels(of_comm)) channels_.fitted.emplace_back(comm, std::move(*fit));
  }
}

double WhatIfModel::perChannelBytesPerNs(std::uint64_t comm) const {
  for (const auto& [id, fit] : channels_.fitted) {
    if (static_cast<std::uint64_t>(id) == comm) return fit.per_channel_bytes_per_ns;
  }
  return channels_.per_channel_bytes_per_ns;
}

double WhatIfModel::collectiveNs(const CollectiveArgs& a, Index fallback_op, std::uint32_t channels) const {
  const double as_recorded = collectiveNs(a, fallback_op);
  const std::uint32_t recorded = fallback_op != analyzer::kNone && fallback_op < channels_.per_op.size() && channels_.per_op[fallback_op] > 0
                                     ? channels_.per_op[fallback_op]
                                     : channels_.usual;
  const double per_channel = perChannelBytesPerNs(a.comm);
  if (channels == 0 || recorded == 0 || channels >= recorded || per_channel <= 0) return as_recorded;
  if (fallback_op != analyzer::kNone && partial_comms_.count(a.comm) != 0) return as_recorded;
  const CommFit* fit = comm_.find(static_cast<std::int64_t>(a.comm));
  const std::int64_t bytes = analyzer::ncclTestsBytes(a.type, static_cast<std::int64_t>(a.count), a.dtype, a.comm_size);
  if (fit == nullptr || fit->ns_per_byte <= 0 || bytes <= 0) return as_recorded;
  const double transfer_ns = fit->ns_per_byte * analyzer::busBandwidthFactor(a.type, a.comm_size) * static_cast<double>(bytes);
  const double recorded_bytes_per_ns = 1.0 / fit->ns_per_byte;
  const double bytes_per_ns = std::min(recorded_bytes_per_ns, channels * per_channel);
  return as_recorded + transfer_ns * (recorded_bytes_per_ns / bytes_per_ns - 1.0);
}

double WhatIfModel::interferenceWeight(Index op, std::uint32_t channels) const {
  if (channels_.usual == 0) return 1.0;
  const std::uint32_t recorded = op != analyzer::kNone && op < channels_.per_op.size() ? channels_.per_op[op] : 0;
  const std::uint32_t used = channels > 0 ? channels : recorded > 0 ? recorded : channels_.usual;
  return static_cast<double>(used) / channels_.usual;
}

trace::Result<WhatIfModel> WhatIfModel::build(const analyzer::RunModel& m, const analyzer::Analysis& a,
                                              const OpPointers& pointers, const ModelOptions& options) {
  if (options.window_iterations < 3) return trace::failure("the model needs a window of at least 3 iterations");
  auto calls = recordedCalls(m, a.iterations, pointers);
  if (!calls.ok()) return calls.status();
  WhatIfModel w;
  w.calls_ = std::move(calls).value();
  if (w.calls_.ranks.empty()) return trace::failure("the run has no rank to model");
  if (a.iterations.numbers.empty()) return trace::failure("the run has no iteration to model");

  if (w.calls_.buffersKnown()) {
    auto window = steadyWindow(m, a, w.calls_, options.window_iterations);
    if (!window.ok()) return window.status();
    w.first_ = window->first;
    w.last_ = window->second;
    for (std::int64_t n = w.first_ + 1; n < w.last_; ++n) w.predicted_.push_back(n);
  } else {
    // Without buffer addresses only the recorded schedule is replayed, so any iteration will
    // do: every one measured on every rank is predicted, from one whole iteration up (the
    // first starts on an idle GPU, the last ends with its own last op, as the analyzer
    // measures it).
    w.predicted_ = iterationsOnEveryRank(a);
    if (w.predicted_.empty()) return trace::failure("the run has no iteration measured on every rank that has steps");
    w.first_ = w.predicted_.front();
    w.last_ = w.predicted_.back();
  }
  w.mirror_absent_ = options.absent_ranks_mirror;
  w.job_ranks_ = static_cast<std::int32_t>(w.calls_.ranks.size());
  {
    std::map<std::uint64_t, std::set<analyzer::Index>> members;
    for (const RecordedRank& rank : w.calls_.ranks) {
      for (const RecordedCall& rc : rank.calls) {
        if (rc.call.kind != CallKind::Collective) continue;
        members[rc.call.collective.comm].insert(rank.rank);
        if (w.mirror_absent_) w.job_ranks_ = std::max(w.job_ranks_, rc.call.collective.comm_size);
      }
    }
    for (const auto& [comm, ranks] : members) w.modelled_members_[comm] = static_cast<std::int32_t>(ranks.size());
  }
  if (!w.mirror_absent_) w.partial_comms_ = partialCommunicators(w.calls_);
  w.absent_peers_start_ = absentPeersStarts(m, w.calls_, w.partial_comms_);
  for (const analyzer::StreamInfo& stream : m.streams) {
    w.app_streams_[{stream.rank, static_cast<StreamHandle>(stream.handle)}] = stream.non_blocking;
  }

  if (trace::Status st = w.setWindows(); !st) return st;

  // Fits.
  w.interference_ = measureInterference(m, a, options.prior_compute_slowdown, options.prior_communication_slowdown);
  if (options.compute_slowdown >= 0) w.interference_.compute = {options.compute_slowdown, false, 0};
  if (options.communication_slowdown >= 0) w.interference_.communication = {options.communication_slowdown, false, 0};
  w.comm_ = fitCommunication(m, a, w.interference_);
  w.standalone_ = standaloneDurations(m, a, w.interference_);
  w.op_class_ = m.ops.op_class;
  w.host_ = measureHostTimings(m);

  // Measured iteration times of the predicted iterations, and the bounds.
  const std::set<std::int64_t> predicted(w.predicted_.begin(), w.predicted_.end());
  std::map<std::int64_t, std::pair<double, int>> measured;
  for (const analyzer::RankIterationMetrics& ri : a.rank_iterations) {
    if (predicted.count(ri.window.number) == 0) continue;
    auto& acc = measured[ri.window.number];
    acc.first += static_cast<double>(ri.window.end - ri.window.start);
    acc.second += 1;
  }
  for (std::int64_t n : w.predicted_) {
    auto it = measured.find(n);
    if (it == measured.end()) return trace::failure(fmt::format("iteration {} has no measured window", n));
    w.measured_per_iteration_.push_back(it->second.first / it->second.second);
  }
  double sum = 0;
  for (double v : w.measured_per_iteration_) sum += v;
  w.measured_ns_ = sum / static_cast<double>(w.measured_per_iteration_.size());

  for (const RecordedRank& rank : w.calls_.ranks) {
    double compute = 0, comm = 0;
    for (const RecordedCall& rc : rank.calls) {
      if (predicted.count(rc.iteration) == 0 || rc.op == analyzer::kNone) continue;
      const analyzer::OpClass c = m.ops.op_class[rc.op];
      if (rc.call.kind == CallKind::Collective) {
        comm += w.collectiveNs(rc.call.collective, rc.op);
      } else if (c == analyzer::OpClass::Compute || c == analyzer::OpClass::Memory) {
        compute += w.standalone_[rc.op];
      }
    }
    const double n = static_cast<double>(w.predicted_.size());
    w.bounds_.compute_ns = std::max(w.bounds_.compute_ns, compute / n);
    w.bounds_.communication_ns = std::max(w.bounds_.communication_ns, comm / n);
  }
  w.bounds_.ideal_ns = std::max(w.bounds_.compute_ns, w.bounds_.communication_ns);
  return w;
}

trace::Status WhatIfModel::setWindows() {
  window_.clear();
  for (const RecordedRank& rank : calls_.ranks) {
    std::size_t begin = rank.calls.size(), end = rank.calls.size();
    for (const auto& [n, first] : rank.iteration_first_call) {
      if (n == first_) begin = first;
      if (n == last_ + 1) end = first;
    }
    if (begin == rank.calls.size() && calls_.buffersKnown()) {
      return trace::failure("a rank has no call in the modelled iterations");
    }
    window_.emplace_back(begin, end);
  }
  return {};
}

trace::Result<WhatIfModel> WhatIfModel::withCalls(RecordedRun calls, const std::vector<CommFit>& fits) const {
  WhatIfModel w = *this;
  w.calls_ = std::move(calls);
  for (const CommFit& f : fits)
    if (w.comm_.find(f.comm_id) == nullptr) w.comm_.fits.push_back(f);
  if (trace::Status st = w.setWindows(); !st) return st;
  return w;
}

Prediction WhatIfModel::predict(const ScheduleRules* rules, bool delayed, const std::vector<ChannelRule>* channels,
                                std::optional<std::uint32_t> connections) const {
  Prediction p;
  std::uint32_t next_host = static_cast<std::uint32_t>(calls_.ranks.size());  // hosts of threads beyond a rank's first
  if (rules != nullptr && !calls_.buffersKnown()) {
    p.error = "collectives carry no buffer addresses, so the tuner cannot tell which kernels produce and consume "
              "them and can replay only the recorded schedule; record the run with `syncopate record` (imported "
              "traces lack them)";
    return p;
  }
  ProgramContext ctx;
  ctx.delayed = delayed;
  ctx.channels = channels;
  ctx.program.launch_latency_ns = host_.launch_latency_ns;
  ctx.program.compute_slowdown = interference_.compute.slowdown;
  ctx.program.communication_slowdown = interference_.communication.slowdown;
  ctx.program.connections = connections.value_or(connections_);
  for (std::uint32_t r = 0; r < calls_.ranks.size(); ++r) {
    const RecordedRank& rank = calls_.ranks[r];
    ProgramBuilder builder(*this, ctx, r);
    std::unique_ptr<Scheduler> scheduler;
    if (rules != nullptr) scheduler = std::make_unique<Scheduler>(*rules, builder, limitsFor(rank));
    const auto [begin, end] = window_[r];
    // Host threads: one per rank where a scheduler decides (the runtime's decisions follow the
    // process's one sequence of calls); in a replay of a run no schedule can be predicted for
    // (an imported trace), one per recorded thread, so that one thread blocked in a sync or a
    // long copy does not hold up the launches another thread made meanwhile.
    const bool thread_hosts = rules == nullptr && !calls_.buffersKnown();
    // Ops issued by no recorded call get a host per stream, which issues each when it started.
    // Each host is busy over the union of its calls (several threads on one host overlap).
    // (thread, stream of an unlaunched op) -> (host, busy until)
    std::map<std::pair<analyzer::Index, StreamHandle>, std::pair<std::uint32_t, std::int64_t>> hosts;
    const std::int64_t window_start = begin < end ? rank.calls[begin].start : 0;
    for (std::size_t i = 0; i < end; ++i) {
      const RecordedCall& rc = rank.calls[i];
      const bool simulate = i >= begin;
      const auto key = !thread_hosts                     ? std::make_pair(analyzer::kNone, StreamHandle{0})
                       : rc.thread != analyzer::kNone ? std::make_pair(rc.thread, StreamHandle{0})
                                                      : std::make_pair(analyzer::kNone, rc.call.stream);
      auto [h, inserted] = hosts.try_emplace(key, r, std::numeric_limits<std::int64_t>::min());
      if (inserted && hosts.size() > 1) h->second.first = next_host++;
      auto& [host, busy_until] = h->second;
      const double gap =
          simulate ? std::max<double>(0, static_cast<double>(rc.start - std::max(busy_until, window_start))) : 0;
      builder.beginCall(rc, simulate, gap, host);
      const Call c = rank.call(i);
      if (scheduler) {
        scheduler->onCall(c);
      } else {
        builder.passthrough(c);
      }
      const std::int64_t from = std::max(rc.start, busy_until);
      builder.endCall(blocking(c) ? static_cast<double>(rc.blocked_after_gpu_ns)
                                  : std::max<double>(0, static_cast<double>(rc.end - from)));
      busy_until = std::max(busy_until, rc.end);
    }
    if (scheduler) {
      if (r == 0) p.stats = scheduler->stats();
      for (std::size_t k = 0; k < kFallbackCount; ++k) p.fallbacks[k] += scheduler->stats().fallbacks[k];
    }
  }
  // A collective some rank issues outside the window has no partner inside it: run it alone.
  for (SimProgram::Op& op : ctx.program.ops) {
    if (op.match != kNoMatch &&
        static_cast<std::int32_t>(ctx.match_participants[op.match]) < std::max(1, ctx.match_expected[op.match])) {
      op.match = kNoMatch;
    }
  }
  p.simulated_ops = ctx.program.ops.size();
  const SimResult sim = simulate(ctx.program);
  if (!sim.ok) {
    p.error = sim.error;
    return p;
  }
  // Iteration n starts at its first GPU op (markers aside) on each rank and ends where n + 1
  // starts, or, when n + 1 is not simulated, with its own last op (the analyzer's windows).
  const std::size_t ranks = calls_.ranks.size();
  const std::int64_t span = last_ - first_ + 1;
  const auto at = [&](std::size_t r, std::int64_t n) {
    return r * static_cast<std::size_t>(span) + static_cast<std::size_t>(n - first_);
  };
  std::vector<double> first_start(ranks * static_cast<std::size_t>(span), -1);
  std::vector<double> last_end(ranks * static_cast<std::size_t>(span), -1);
  for (std::size_t o = 0; o < ctx.program.ops.size(); ++o) {
    const SimProgram::Op& op = ctx.program.ops[o];
    if (op.op_class == OpClass::Marker || op.tag < first_ || op.tag > last_) continue;
    const std::size_t r = ctx.program.streams[op.stream].rank;
    double& f = first_start[at(r, op.tag)];
    if (f < 0 || sim.start[o] < f) f = sim.start[o];
    last_end[at(r, op.tag)] = std::max(last_end[at(r, op.tag)], sim.end[o]);
  }
  double total = 0;
  for (std::int64_t n : predicted_) {
    double sum = 0;
    int count = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      const double a = first_start[at(r, n)];
      const double b = n < last_ && first_start[at(r, n + 1)] >= 0 ? first_start[at(r, n + 1)] : last_end[at(r, n)];
      if (a < 0 || b < 0) continue;
      sum += std::max(0.0, b - a);
      ++count;
    }
    if (count == 0) {
      p.error = fmt::format("iteration {} ran no GPU op in the simulation", n);
      return p;
    }
    p.per_iteration_ns.push_back(sum / count);
    total += sum / count;
  }
  p.iteration_ns = total / static_cast<double>(predicted_.size());
  p.ok = true;
  return p;
}

}  // namespace syncopate::tuner
