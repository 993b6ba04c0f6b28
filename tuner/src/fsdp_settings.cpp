#include "syncopate/tuner/fsdp_settings.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "syncopate/tuner/calls_writer.hpp"
#include "syncopate/tuner/sharded_overlap.hpp"

namespace syncopate::tuner {
namespace {

constexpr std::uint64_t kFsdpEventBit = 1ull << 58;  // apart from the application's and the other rewrites'
constexpr std::size_t kNone = static_cast<std::size_t>(-1);
// FSDP's _FreeEventQueue: the host waits once this many freeings are outstanding.
constexpr std::size_t kMostFreeingsOutstanding = 2;

// One all-gather of a step, and the compute stream's wait that first covers it (its need).
struct Gather {
  std::size_t call = 0;
  std::size_t need = 0;      // index into StepPattern::waits
  bool backward = false;     // gathers a unit gathered before in the step: for its backward
  std::size_t sync = kNone;  // the limiter's host wait just before it on its thread
};

// A step of one rank as FSDP issues it.
struct StepPattern {
  std::vector<std::size_t> waits;         // the compute stream's waits for the unshard stream
  std::vector<std::size_t> wait_records;  // the unshard stream's record each waits for
  std::vector<bool> forward_wait;         // a wait some forward all-gather needs
  std::vector<Gather> gathers;
  std::vector<std::size_t> reduces;       // the reduce-scatters on the communicator
};

bool isCollective(const RecordedCall& rc, std::uint64_t comm, trace::CollType type) {
  return rc.call.kind == CallKind::Collective && rc.call.collective.comm == comm && rc.call.collective.type == type;
}

// The call before `i` that its thread made.
std::size_t previousOnThread(const RecordedRank& rank, std::size_t i) {
  for (std::size_t k = i; k-- > 0;) {
    if (rank.calls[k].thread == rank.calls[i].thread) return k;
  }
  return kNone;
}

// The first kernel on `stream` after call `i`, before `end`.
std::size_t firstKernelAfter(const RecordedRank& rank, std::size_t i, StreamHandle stream, std::size_t end) {
  for (std::size_t k = i + 1; k < end; ++k) {
    const Call& c = rank.calls[k].call;
    if (c.stream == stream && c.kind == CallKind::Kernel) return k;
  }
  return end;
}

// A rank's unshard stream (its all-gathers', one of their own) and compute stream (the one that
// waits for it): streams are each process's own handles.
struct FsdpStreams {
  StreamHandle unshard = kLegacyStream, compute = kLegacyStream;
};

trace::Result<FsdpStreams> fsdpStreams(const RecordedRank& rank, std::int64_t step, std::uint64_t comm) {
  const auto [begin, end] = stepCalls(rank, step);
  std::set<StreamHandle> gather_streams, kernel_streams;
  for (std::size_t i = begin; i < end; ++i) {
    const RecordedCall& rc = rank.calls[i];
    if (rc.iteration != step) continue;
    if (isCollective(rc, comm, trace::CollType::AllGather)) gather_streams.insert(rc.call.stream);
    if (rc.call.kind == CallKind::Kernel) kernel_streams.insert(rc.call.stream);
  }
  if (gather_streams.empty()) {
    return trace::failure(fmt::format("rank {}'s step {} gathers no parameters on the communicator of its "
                                      "reduce-scatters",
                                      rank.rank, step));
  }
  if (gather_streams.size() > 1) {
    return trace::failure(fmt::format("rank {}'s step {} gathers parameters on more than one stream", rank.rank, step));
  }
  FsdpStreams out;
  out.unshard = *gather_streams.begin();
  if (kernel_streams.count(out.unshard) > 0) {
    return trace::failure("the all-gathers are issued on a stream that also runs the model's kernels, not on a stream "
                          "of their own as FSDP's unshard stream is: where they are issued there changes nothing "
                          "FSDP's settings move");
  }
  for (std::size_t i = begin; i < end && out.compute == kLegacyStream; ++i) {
    const RecordedCall& rc = rank.calls[i];
    if (rc.iteration != step || rc.call.kind != CallKind::StreamWait || rc.call.stream == out.unshard) continue;
    const std::optional<std::size_t> record = recordOfWait(rank, i);
    if (record && rank.calls[*record].call.stream == out.unshard) out.compute = rc.call.stream;
  }
  if (out.compute == kLegacyStream) {
    return trace::failure(fmt::format("on rank {}, no stream waits for the stream of the all-gathers", rank.rank));
  }
  return out;
}

trace::Result<StepPattern> stepPattern(const RecordedRank& rank, std::int64_t step, std::uint64_t comm,
                                       const FsdpStreams& fsdp) {
  StepPattern p;
  const auto [begin, end] = stepCalls(rank, step);
  std::set<std::pair<std::uint64_t, std::uint64_t>> gathered;  // (shard, count) seen in the step
  for (std::size_t i = begin; i < end; ++i) {
    const RecordedCall& rc = rank.calls[i];
    if (rc.iteration != step) continue;
    if (isCollective(rc, comm, trace::CollType::ReduceScatter)) p.reduces.push_back(i);
    if (isCollective(rc, comm, trace::CollType::AllGather)) {
      if (rc.call.stream != fsdp.unshard) {
        return trace::failure(fmt::format("rank {}'s all-gather (call {} of step {}) is not on the unshard stream",
                                          rank.rank, i, step));
      }
      Gather g;
      g.call = i;
      g.backward = !gathered.insert({rc.call.collective.send, rc.call.collective.count}).second;
      // The limiter's wait: for a freeing, an event recorded on the compute stream.
      const std::size_t previous = previousOnThread(rank, i);
      if (previous != kNone && rank.calls[previous].call.kind == CallKind::EventSync) {
        const std::optional<std::size_t> freeing = recordOfWait(rank, previous);
        if (freeing && rank.calls[*freeing].call.stream == fsdp.compute) g.sync = previous;
      }
      p.gathers.push_back(g);
    }
    if (rc.call.kind == CallKind::StreamWait && rc.call.stream == fsdp.compute) {
      const std::optional<std::size_t> record = recordOfWait(rank, i);
      if (record && rank.calls[*record].call.stream == fsdp.unshard) {
        p.waits.push_back(i);
        p.wait_records.push_back(*record);
      }
    }
  }
  p.forward_wait.assign(p.waits.size(), false);
  for (Gather& g : p.gathers) {
    const auto need = std::find_if(p.wait_records.begin(), p.wait_records.end(), [&](std::size_t r) { return r > g.call; });
    if (need == p.wait_records.end()) {
      return trace::failure(fmt::format("rank {}'s all-gather (call {} of step {}) is never waited for by the compute "
                                        "stream",
                                        rank.rank, g.call, step));
    }
    g.need = static_cast<std::size_t>(need - p.wait_records.begin());
    if (!g.backward) p.forward_wait[g.need] = true;
  }
  return p;
}

// Where a gather goes: beside a call, after it or before it.
struct Place {
  std::size_t anchor = 0;
  bool after = false;
};

// The reduce-scatter issued between the wait `k - 1` and the record of wait `k` (the unit in
// that slot's), as the record its post-backward stream waits for: kNone when there is none.
std::size_t slotReduceReady(const RecordedRank& rank, const StepPattern& p, std::size_t k) {
  for (std::size_t r : p.reduces) {
    if (r <= p.waits[k - 1] || r >= p.wait_records[k]) continue;
    if (const std::optional<ReadyPair> ready = readyPairBefore(rank, r); ready && ready->record > p.waits[k - 1]) {
      return ready->record;
    }
    return r;
  }
  return kNone;
}

// Whether gather `g`'s unit follows another of its own pass in the step: the wait before its
// need is that unit's (a forward unit's for a forward gather; in backward, one no forward gather
// needs: the root's, kept gathered from forward, or a block's).
bool followsAUnit(const StepPattern& p, const Gather& g) {
  return g.need > 0 && p.forward_wait[g.need - 1] == !g.backward;
}

Place placeFor(const RecordedRank& rank, const StepPattern& p, const Gather& g, const FsdpSettings& s) {
  const Place own_need{p.wait_records[g.need], false};
  if (!followsAUnit(p, g)) return own_need;
  const Place prefetched{p.waits[g.need - 1], true};
  if (!g.backward) return s.forward_prefetch ? prefetched : own_need;
  switch (s.backward_prefetch) {
    case FsdpBackwardPrefetch::Pre: return prefetched;
    case FsdpBackwardPrefetch::Post: {
      const std::size_t ready = slotReduceReady(rank, p, g.need);
      return ready == kNone ? own_need : Place{ready, false};
    }
    case FsdpBackwardPrefetch::None: return own_need;
  }
  return own_need;
}

// What a recorded step shows of the settings, or why it shows no one value of them.
trace::Result<FsdpSettings> recordedSettings(const RecordedRank& rank, const StepPattern& p, const FsdpStreams& fsdp,
                                             bool& forward_applies) {
  FsdpSettings s;
  std::set<bool> forward;
  std::set<FsdpBackwardPrefetch> backward;
  bool own_need_without_reduce = false;
  const std::size_t end = rank.calls.size();
  for (const Gather& g : p.gathers) {
    if (!followsAUnit(p, g)) continue;
    const std::size_t slot_wait = p.waits[g.need - 1];
    const bool before_kernels = g.call > slot_wait && g.call < firstKernelAfter(rank, slot_wait, fsdp.compute, end);
    if (!g.backward) {
      forward.insert(before_kernels);
      continue;
    }
    const std::size_t ready = slotReduceReady(rank, p, g.need);
    if (before_kernels) backward.insert(FsdpBackwardPrefetch::Pre);
    else if (ready != kNone && g.call < ready) backward.insert(FsdpBackwardPrefetch::Post);
    else if (ready == kNone) own_need_without_reduce = true;
    else backward.insert(FsdpBackwardPrefetch::None);
  }
  s.limit_all_gathers = std::any_of(p.gathers.begin(), p.gathers.end(), [](const Gather& g) { return g.sync != kNone; });
  if (forward.size() > 1) return trace::failure("some forward all-gathers are prefetched and some are not");
  if (backward.size() > 1) return trace::failure("the backward all-gathers are issued at more than one point of a unit");
  forward_applies = !forward.empty();
  s.forward_prefetch = forward_applies && *forward.begin();
  if (!backward.empty()) s.backward_prefetch = *backward.begin();
  else if (own_need_without_reduce) s.backward_prefetch = FsdpBackwardPrefetch::None;
  return s;
}

// One rank's rewrite.
class RankRewrite {
 public:
  RankRewrite(const RecordedRank& rank, std::uint64_t comm, const FsdpStreams& streams, std::uint64_t& next_event)
      : rank_(rank), comm_(comm), fsdp_(streams), edits_(rank.calls.size()), next_event_(next_event) {}

  trace::Status step(std::int64_t n, const FsdpSettings& settings) {
    first_ = std::min(first_, n);
    last_ = std::max(last_, n);
    auto pattern = stepPattern(rank_, n, comm_, fsdp_);
    if (!pattern.ok()) return pattern.status();
    const StepPattern& p = *pattern;
    for (const Gather& g : p.gathers) {
      edits_.dropped[g.call] = true;
      if (g.sync != kNone) {
        // The recorded wait goes with its all-gather. In its place, a wait for an event never
        // recorded keeps its span off the host's CPU time: the time it blocked is the limiter's,
        // which the value being predicted may not have.
        edits_.dropped[g.sync] = true;
        freeings_.insert(rank_.calls[g.sync].call.event);
        RecordedCall vacant = rank_.calls[g.sync];
        vacant.call.event = next_event_++;
        edits_.before[g.sync].push_back({vacant, false});
      }
      const Place at = placeFor(rank_, p, g, settings);
      RecordedCall moved = rank_.calls[g.call];
      moved.start = moved.end = at.after ? rank_.calls[at.anchor].end : rank_.calls[at.anchor].start;
      (at.after ? edits_.after[at.anchor] : edits_.before[at.anchor]).push_back({moved, true});
    }
    addFreeingPoints(p);
    return trace::Status();
  }

  // The rate limiter, as FSDP's queue runs it over the rewritten order: a freeing record on the
  // compute stream, with an event of its own, wherever FSDP frees gathered parameters in the
  // rewritten steps (where the run recorded one, else where its hooks free them), and a host wait
  // for the oldest before each moved all-gather while two are outstanding. Outside the steps the
  // recorded records and waits stay, count in the queue, and a recorded wait whose freeing was
  // made anew waits for the new one.
  trace::Status limit(bool on) {
    if (!on) return trace::Status();
    if (!freeings_.empty()) {
      for (std::size_t i = 0; i < rank_.calls.size(); ++i) {
        const RecordedCall& rc = rank_.calls[i];
        if (rewritten(rc) && isFreeing(rc)) {
          edits_.dropped[i] = true;
          edits_.before[i].push_back({freeingAt(rc, rc.thread)});
        }
      }
    } else {
      for (const auto& [anchor, thread] : freeing_points_) {
        std::vector<CallEdits::Written>& list = edits_.before[anchor];
        std::vector<CallEdits::Written> freed_first{freeingAt(rank_.calls[anchor], thread)};  // before what is moved there
        freed_first.insert(freed_first.end(), list.begin(), list.end());
        list = std::move(freed_first);
      }
    }
    if (made_freeings_.empty()) return trace::failure("the run shows no point where FSDP frees gathered parameters");
    std::deque<std::uint64_t> outstanding;
    const auto visit = [&](std::vector<CallEdits::Written>& list, std::size_t position) {
      const CallEdits::Written& w = list[position];
      if (w.call.call.kind == CallKind::EventRecord && made_freeings_.count(w.call.call.event) > 0) {
        outstanding.push_back(w.call.call.event);
        return false;
      }
      // A moved all-gather is the one recorded call among the written ones.
      if (!w.recorded || w.call.call.kind != CallKind::Collective || outstanding.size() < kMostFreeingsOutstanding) {
        return false;
      }
      const RecordedCall wait = writtenAt(w.call, false, CallKind::EventSync, kLegacyStream, outstanding.front());
      outstanding.pop_front();
      list.insert(list.begin() + static_cast<std::ptrdiff_t>(position), {wait, false});
      return true;
    };
    for (std::size_t i = 0; i < rank_.calls.size(); ++i) {
      if (auto b = edits_.before.find(i); b != edits_.before.end()) walk(b->second, visit);
      const RecordedCall& rc = rank_.calls[i];
      if (!edits_.dropped[i] && isFreeing(rc)) {
        outstanding.push_back(rc.call.event);
      } else if (!edits_.dropped[i] && rc.call.kind == CallKind::EventSync && freeings_.count(rc.call.event) > 0 &&
                 !outstanding.empty()) {
        if (outstanding.front() != rc.call.event) {
          RecordedCall wait = rc;
          wait.call.event = outstanding.front();
          edits_.dropped[i] = true;
          edits_.before[i].push_back({wait, false});
        }
        outstanding.pop_front();
      }
      if (auto a = edits_.after.find(i); a != edits_.after.end()) walk(a->second, visit);
    }
    return trace::Status();
  }

  RecordedRank finish() const { return edits_.applyTo(rank_); }

 private:
  bool rewritten(const RecordedCall& rc) const { return rc.iteration >= first_ && rc.iteration <= last_; }
  bool isFreeing(const RecordedCall& rc) const {
    return rc.call.kind == CallKind::EventRecord && rc.call.stream == fsdp_.compute && freeings_.count(rc.call.event) > 0;
  }
  // A freeing record before `at`, made by `thread`.
  CallEdits::Written freeingAt(const RecordedCall& at, analyzer::Index thread) {
    const std::uint64_t event = next_event_++;
    made_freeings_.insert(event);
    RecordedCall record = writtenAt(at, false, CallKind::EventRecord, fsdp_.compute, event);
    record.thread = thread;
    return {record};
  }

  // Where FSDP's hooks free gathered parameters in step `p` (FULL_SHARD): after each unit's
  // forward but the root's (the units gathered again for backward), before the next unit's
  // pre-forward; and after each unit's gradient kernels, before its reduce-scatter is handed to
  // the post-backward stream (the root's last, before the step's last reduce-scatter).
  void addFreeingPoints(const StepPattern& p) {
    std::set<std::pair<std::uint64_t, std::uint64_t>> regathered;
    for (const Gather& g : p.gathers) {
      if (g.backward) regathered.insert(unitOf(g));
    }
    for (const Gather& g : p.gathers) {
      if (!g.backward && regathered.count(unitOf(g)) > 0 && g.need + 1 < p.waits.size()) {
        // By the thread that ran the unit's forward, before the next wait, which may be backward's.
        freeing_points_.emplace_back(p.wait_records[g.need + 1], rank_.calls[p.waits[g.need]].thread);
      }
    }
    for (std::size_t r : p.reduces) {
      const std::optional<ReadyPair> ready = readyPairBefore(rank_, r);
      const std::size_t at = ready ? ready->record : r;
      freeing_points_.emplace_back(at, rank_.calls[at].thread);
    }
  }
  std::pair<std::uint64_t, std::uint64_t> unitOf(const Gather& g) const {
    const CollectiveArgs& a = rank_.calls[g.call].call.collective;
    return {a.send, a.count};
  }

  template <class Visit>
  static void walk(std::vector<CallEdits::Written>& list, Visit&& visit) {
    for (std::size_t k = 0; k < list.size(); ++k) {
      if (visit(list, k)) ++k;  // past the wait written before it
    }
  }

  const RecordedRank& rank_;
  std::uint64_t comm_;
  FsdpStreams fsdp_;
  CallEdits edits_;
  std::uint64_t& next_event_;
  std::int64_t first_ = INT64_MAX, last_ = INT64_MIN;  // the steps rewritten
  std::unordered_set<std::uint64_t> freeings_;          // the events the limiter waited for
  std::unordered_set<std::uint64_t> made_freeings_;     // the freeing records written
  // Where to write them for a run without (before which call, by which thread).
  std::vector<std::pair<std::size_t, analyzer::Index>> freeing_points_;
};

}  // namespace

const char* toString(FsdpBackwardPrefetch prefetch) {
  switch (prefetch) {
    case FsdpBackwardPrefetch::Pre: return "BACKWARD_PRE";
    case FsdpBackwardPrefetch::Post: return "BACKWARD_POST";
    case FsdpBackwardPrefetch::None: return "None";
  }
  return "?";
}

FsdpRun findFsdp(const RecordedRun& run, std::int64_t step) {
  FsdpRun out;
  if (run.ranks.empty()) {
    out.why_not = "the run has no rank";
    return out;
  }
  const RecordedRank& rank = run.ranks.front();
  const std::optional<ReducingCommunicator> most = mostReducingCommunicator(rank, step);
  if (!most) {
    out.why_not = "rank 0's step reduce-scatters no gradients";
    return out;
  }
  out.comm = most->comm;
  const trace::Result<FsdpStreams> streams = fsdpStreams(rank, step, out.comm);
  if (!streams.ok()) {
    out.why_not = streams.message();
    return out;
  }
  out.unshard = streams->unshard;
  out.compute = streams->compute;
  auto pattern = stepPattern(rank, step, out.comm, *streams);
  if (!pattern.ok()) {
    out.why_not = pattern.message();
    return out;
  }
  for (const Gather& g : pattern->gathers) {
    (g.backward ? out.backward_gathers : out.forward_gathers) += 1;
    if (!g.backward) out.parameter_bytes += rank.calls[g.call].call.collective.recv_bytes();
  }
  out.reduce_scatters = pattern->reduces.size();
  if (out.backward_gathers == 0) {
    out.why_not = "no unit is gathered again for backward (parameters kept whole after forward: not FULL_SHARD)";
    return out;
  }
  auto recorded = recordedSettings(rank, *pattern, *streams, out.forward_prefetch_applies);
  if (!recorded.ok()) {
    out.why_not = fmt::format("rank 0's step shows no one value of FSDP's settings: {}", recorded.message());
    return out;
  }
  out.recorded = *recorded;
  out.found = true;
  return out;
}

trace::Result<RecordedRun> fsdpSettingsCalls(const RecordedRun& run, std::int64_t first, std::int64_t last,
                                             const FsdpRun& fsdp, const FsdpSettings& settings) {
  RecordedRun out;
  out.assumptions = run.assumptions;
  out.imported = run.imported;
  std::uint64_t next_event = kFsdpEventBit;
  for (const RecordedRank& rank : run.ranks) {
    const trace::Result<FsdpStreams> streams = fsdpStreams(rank, first, fsdp.comm);
    if (!streams.ok()) return streams.status();
    RankRewrite rewrite(rank, fsdp.comm, *streams, next_event);
    for (std::int64_t n = first; n <= last; ++n) {
      if (trace::Status s = rewrite.step(n, settings); !s.ok()) return s;
    }
    if (trace::Status s = rewrite.limit(settings.limit_all_gathers); !s.ok()) return s;
    out.ranks.push_back(rewrite.finish());
  }
  return out;
}

std::string fsdpHowTo(const std::string& setting, const std::string& value) {
  const std::string argument = setting == "backward_prefetch" && value != "None" ? "BackwardPrefetch." + value : value;
  return fmt::format("FullyShardedDataParallel(model, ..., {}={}) where the model is wrapped", setting, argument);
}

}  // namespace syncopate::tuner
