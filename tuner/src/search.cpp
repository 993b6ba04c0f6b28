#include "syncopate/tuner/search.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "syncopate/analyzer/parallel_for.hpp"

namespace syncopate::tuner {

namespace {

// Watches the scheduler flush groups when no group is planned: each flush agrees, then
// issues its members in order.
class GroupProbe : public Executor {
 public:
  std::size_t current_call = 0;
  std::vector<std::pair<std::size_t, std::vector<HeldCollective>>> groups;  // flush call, members

  bool prepareEvents(std::uint32_t) override { return true; }
  StreamHandle communicationStream() override { return kModelCommunicationStream; }
  StreamHandle joinStream() override { return kModelJoinStream; }
  void passthrough(const Call&) override {}
  void recordApplicationEvent(const Call&, StreamHandle) override {}
  void issueHeld(const HeldCollective& h) override {
    if (!groups.empty()) groups.back().second.push_back(h);
  }
  void recordEvent(EventSlot, StreamHandle) override {}
  void waitEvent(StreamHandle, EventSlot) override {}
  void hostWait(EventSlot) override {}
  void queryWith(const Call&, EventSlot) override {}
  void issueUnit(const UnitIssue&) override {}
  bool agree(std::uint64_t, std::span<const HeldCollective>, bool) override {
    groups.emplace_back(current_call, std::vector<HeldCollective>{});
    return true;
  }
  void fallback(Fallback, const Call&) override {}
};

// Where the program first needs the member's result: the first later call on the member's own
// stream that reads or writes its buffers (the work that follows on that stream, such as the
// next forward, waits there), else the first on any stream (a check on a side stream waits
// for every bucket alike, so it tells no order). The rank's last call + 1 when none does.
std::size_t consumerOf(const RecordedRank& rank, std::size_t call, std::size_t end) {
  const Call member = rank.call(call);
  const CollectiveArgs& a = member.collective;
  std::size_t any = end;
  for (std::size_t i = call + 1; i < end; ++i) {
    const Call c = rank.call(i);
    if (!touchesBuffersOf(c, a)) continue;
    if (c.stream == member.stream) return i;
    any = std::min(any, i);
  }
  return any;
}

// Collectives that fuse (fusible(), calls.hpp) of one reduction.
bool fusibleWith(const CollectiveArgs& a, const CollectiveArgs& b) {
  return fusible(a.type) && a.comm == b.comm && a.type == b.type && a.dtype == b.dtype && a.op == b.op;
}

// What a bucket cap counts of a collective: its whole buffer (a reduce-scatter's input, an
// all-gather's output), so that one cap means the same for every kind.
std::uint64_t bucketBytes(const CollectiveArgs& a) { return std::max(a.send_bytes(), a.recv_bytes()); }

GroupPlan planGroup(const Knobs& k, const RecordedGroup& g) {
  GroupPlan p;
  p.signature = g.signature;
  p.members = static_cast<std::uint32_t>(g.members.size());
  std::vector<std::uint64_t> bucket_bytes;
  for (std::uint32_t i = 0; i < p.members;) {
    const std::uint32_t start = i;
    std::uint64_t bytes = bucketBytes(g.members[i]);
    ++i;
    while (i < p.members && k.bucket_bytes > 0 && fusibleWith(g.members[i], g.members[start]) &&
           bytes + bucketBytes(g.members[i]) <= k.bucket_bytes) {
      bytes += bucketBytes(g.members[i]);
      ++i;
    }
    p.bucket_first.push_back(start);
    bucket_bytes.push_back(bytes);
  }
  const std::uint32_t buckets = p.bucketCount();
  for (std::uint32_t b = 0; b < buckets; ++b) {
    std::uint64_t parts = 1;
    if (splittable(g.members[p.bucket_first[b]].type) && k.split_bytes > 0 && bucket_bytes[b] > k.split_bytes) {
      parts = std::min<std::uint64_t>(16, (bucket_bytes[b] + k.split_bytes - 1) / k.split_bytes);
    }
    p.parts.push_back(static_cast<std::uint16_t>(parts));
  }
  std::vector<std::uint32_t> order(buckets);
  for (std::uint32_t b = 0; b < buckets; ++b) order[b] = b;
  if (k.order == Order::Ready) {
    std::vector<std::size_t> ready(buckets, 0);
    for (std::uint32_t b = 0; b < buckets; ++b)
      for (std::uint32_t i = p.bucket_first[b]; i < p.bucketEnd(b); ++i) ready[b] = std::max(ready[b], g.producer_call[i]);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return ready[a] < ready[b]; });
    const std::uint32_t tail = std::min(k.priority_tail, buckets);
    std::sort(order.end() - tail, order.end());
  } else if (k.order == Order::Need) {
    std::vector<std::size_t> need(buckets, std::numeric_limits<std::size_t>::max());
    for (std::uint32_t b = 0; b < buckets; ++b)
      for (std::uint32_t i = p.bucket_first[b]; i < p.bucketEnd(b); ++i) need[b] = std::min(need[b], g.consumer_call[i]);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return need[a] < need[b]; });
  }
  for (std::uint32_t b : order)
    for (std::uint16_t part = 0; part < p.parts[b]; ++part) p.order.push_back({static_cast<std::uint16_t>(b), part});
  return p;
}

// Whether the plan keeps a group where the program put it (Knobs::keep_comms).
bool keptInPlace(const Knobs& k, const RecordedGroup& g) {
  return std::all_of(g.members.begin(), g.members.end(), [&](const CollectiveArgs& a) {
    return a.comm_index < 32 && (k.keep_comms >> a.comm_index & 1u) != 0;
  });
}

// Members that follow each other in memory (Scheduler::contiguous).
bool contiguousMembers(const RecordedGroup& g, std::uint32_t first, std::uint32_t end) {
  for (std::uint32_t i = first + 1; i < end; ++i)
    if (!followsInMemory(g.members[i - 1], g.members[i])) return false;
  return true;
}

// The fusion buffer the runtime allocates for a schedule (PlanRuntime::issueUnit): the largest
// unit that is not one call in place: an all-reduce part through the buffer, or the rank-by-rank
// layout of fused reduce-scatters or all-gathers (sharded_fusion.hpp). 0: none.
std::uint64_t fusionBufferBytes(const Knobs& k, const std::vector<RecordedGroup>& groups) {
  std::uint64_t most = 0;
  for (const RecordedGroup& g : groups) {
    if (keptInPlace(k, g)) continue;
    const GroupPlan p = planGroup(k, g);
    for (std::uint32_t b = 0; b < p.bucketCount(); ++b) {
      const std::uint32_t first = p.bucket_first[b], end = p.bucketEnd(b);
      if (end - first < 2) continue;
      const CollectiveArgs& a = g.members[first];
      const std::uint64_t elem = trace::dataTypeSize(a.dtype);
      std::uint64_t total = 0;
      for (std::uint32_t i = first; i < end; ++i) total += g.members[i].count;
      if (!splittable(a.type)) {
        const std::uint64_t ranks = a.comm_size > 0 ? static_cast<std::uint64_t>(a.comm_size) : 1;
        most = std::max(most, (ranks + 1) * total * elem);
      } else if (!contiguousMembers(g, first, end)) {
        most = std::max(most, (total + p.parts[b] - 1) / p.parts[b] * elem);
      }
    }
  }
  return most;
}

std::vector<std::uint64_t> capGrid(const std::vector<RecordedGroup>& groups) {
  std::uint64_t smallest = 0, largest_group = 0;
  for (const RecordedGroup& g : groups) {
    std::uint64_t total = 0;
    for (const CollectiveArgs& a : g.members) {
      if (!fusible(a.type)) continue;
      const std::uint64_t b = bucketBytes(a);
      if (b > 0 && (smallest == 0 || b < smallest)) smallest = b;
      total += b;
    }
    largest_group = std::max(largest_group, total);
  }
  std::vector<std::uint64_t> caps = {0};
  if (smallest == 0) return caps;
  // Geometric steps from two of the smallest collectives to the whole group, at most 10.
  const double ratio = static_cast<double>(largest_group) / static_cast<double>(smallest);
  const double step = std::max(2.0, std::pow(ratio, 1.0 / 10.0));
  for (double cap = 2.0 * static_cast<double>(smallest); cap < static_cast<double>(largest_group); cap *= step) {
    caps.push_back(static_cast<std::uint64_t>(cap));
  }
  caps.push_back(largest_group);
  return caps;
}

}  // namespace

bool touches(const Call& c, std::uint64_t lo, std::uint64_t hi) {
  if (c.kind == CallKind::Collective) {
    const CollectiveArgs& a = c.collective;
    return (a.send < hi && a.send + a.send_bytes() > lo) || (a.recv < hi && a.recv + a.recv_bytes() > lo);
  }
  if (c.unknown_pointers) return true;
  for (const Touch& t : c.touches) {
    const std::uint64_t end = t.bytes == 0 ? t.address + 1 : t.address + t.bytes;
    if (t.address < hi && end > lo) return true;
  }
  return false;
}

bool touchesBuffersOf(const Call& c, const CollectiveArgs& a) {
  return touches(c, a.send, a.send + a.send_bytes()) || touches(c, a.recv, a.recv + a.recv_bytes());
}

std::size_t producerOf(const RecordedRank& rank, std::size_t call) {
  const CollectiveArgs& a = rank.calls[call].call.collective;
  for (std::size_t i = call; i-- > 0;) {
    const Call c = rank.call(i);
    if (touchesBuffersOf(c, a)) return i;
  }
  return call;
}

trace::Result<std::vector<RecordedGroup>> recordedGroups(const WhatIfModel& model) {
  std::vector<std::vector<RecordedGroup>> per_rank;
  const ScheduleRules none;
  for (std::size_t r = 0; r < model.ranks(); ++r) {
    const RecordedRank& rank = model.calls().ranks[r];
    GroupProbe probe;
    Scheduler scheduler(none, probe);
    const auto [begin, end] = model.windowCalls(r);
    for (std::size_t i = 0; i < end; ++i) {
      probe.current_call = i;
      scheduler.onCall(rank.call(i));
    }
    std::vector<RecordedGroup> groups;
    for (const auto& [flush_call, members] : probe.groups) {
      if (flush_call < begin || members.empty()) continue;
      RecordedGroup g;
      GroupSignature sig;
      for (const HeldCollective& h : members) {
        sig.add(h.args);
        g.members.push_back(h.args);
        g.member_call.push_back(h.call_id);
        g.producer_call.push_back(producerOf(rank, h.call_id));
        g.consumer_call.push_back(consumerOf(rank, h.call_id, rank.calls.size()));
      }
      g.signature = sig.value();
      groups.push_back(std::move(g));
    }
    per_rank.push_back(std::move(groups));
  }
  for (std::size_t r = 1; r < per_rank.size(); ++r) {
    bool same = per_rank[r].size() == per_rank[0].size();
    for (std::size_t i = 0; same && i < per_rank[r].size(); ++i) same = per_rank[r][i].signature == per_rank[0][i].signature;
    if (!same) {
      return trace::failure(fmt::format(
          "rank {} flushes other groups of collectives than rank 0 (their call sequences differ), so no plan could "
          "apply the same way on every rank",
          model.calls().ranks[r].rank));
    }
  }
  std::vector<RecordedGroup> distinct;
  std::set<std::uint64_t> seen;
  if (!per_rank.empty())
    for (RecordedGroup& g : per_rank[0])
      if (seen.insert(g.signature).second) distinct.push_back(std::move(g));
  return distinct;
}

ScheduleRules rulesFor(const Knobs& knobs, const std::vector<RecordedGroup>& groups) {
  ScheduleRules rules;
  rules.communication_stream = knobs.communication_stream;
  rules.per_bucket_waits = knobs.per_bucket_waits;
  for (const RecordedGroup& g : groups) {
    GroupPlan p = planGroup(knobs, g);
    p.keep = keptInPlace(knobs, g);
    rules.groups.push_back(std::move(p));
  }
  std::sort(rules.groups.begin(), rules.groups.end(),
            [](const GroupPlan& a, const GroupPlan& b) { return a.signature < b.signature; });
  return rules;
}

trace::Result<SearchResult> search(const WhatIfModel& model, const SearchOptions& options, const Progress& progress) {
  SearchResult out;
  out.baseline = model.predict(nullptr);
  if (!out.baseline.ok) return trace::failure("the model cannot replay the recorded schedule: " + out.baseline.error);
  auto groups = recordedGroups(model);
  if (!groups.ok()) return groups.status();
  out.groups = std::move(groups).value();
  if (out.groups.empty()) {
    out.note =
        "the run issues no all-reduce, reduce-scatter or all-gather in its steady iterations, so there is nothing to "
        "reschedule";
    return out;
  }

  std::vector<Knobs> tried;
  std::size_t done = 0, total = 0;
  std::mutex progress_lock;
  // Predicts a batch of schedules side by side; the candidates join the results in the batch's
  // order, so the outcome does not depend on the threads.
  auto evaluateAll = [&](const std::vector<Knobs>& batch) {
    std::vector<Candidate> fresh;
    for (const Knobs& k : batch) {
      if (std::find(tried.begin(), tried.end(), k) != tried.end()) continue;
      tried.push_back(k);
      const std::uint64_t fusion_bytes = fusionBufferBytes(k, out.groups);
      if (options.memory_limit > 0 && fusion_bytes > options.memory_limit) {
        ++out.over_memory_limit;
        continue;
      }
      Candidate c;
      c.knobs = k;
      c.fusion_buffer_bytes = fusion_bytes;
      fresh.push_back(std::move(c));
    }
    // Side by side: the predictions are independent, and WhatIfModel::predict only reads the model.
    analyzer::parallelFor(fresh.size(), [&](std::size_t i) {
      Candidate& c = fresh[i];
      try {
        const ScheduleRules rules = rulesFor(c.knobs, out.groups);
        c.prediction = model.predict(&rules, c.knobs.delayed);
      } catch (const std::exception& e) {
        c.prediction.ok = false;
        c.prediction.error = e.what();
      }
      const std::lock_guard<std::mutex> hold(progress_lock);
      ++done;
      if (progress) progress(done, std::max(done, total));
    });
    for (Candidate& c : fresh) {
      if (c.prediction.ok) c.gain = 1.0 - c.prediction.iteration_ns / out.baseline.iteration_ns;
      out.candidates.push_back(std::move(c));
    }
  };
  auto evaluate = [&](const Knobs& k) { evaluateAll({k}); };
  auto best = [&]() -> Knobs {
    const Candidate* b = nullptr;
    for (const Candidate& c : out.candidates)
      if (c.prediction.ok && !c.knobs.delayed && (b == nullptr || c.prediction.iteration_ns < b->prediction.iteration_ns)) b = &c;
    return b == nullptr ? Knobs{} : b->knobs;
  };

  // Stage 1: placement, order and bucket size.
  const std::vector<std::uint64_t> caps = capGrid(out.groups);
  total = caps.size() * 4 + 12;
  std::vector<Knobs> first;
  for (std::uint64_t cap : caps) {
    for (Order order : {Order::Ready, Order::Program, Order::Need}) {
      Knobs k;
      k.bucket_bytes = cap;
      k.order = order;
      first.push_back(k);
    }
    Knobs in_place;
    in_place.communication_stream = false;
    in_place.order = Order::Program;
    in_place.bucket_bytes = cap;
    first.push_back(in_place);
  }
  evaluateAll(first);
  // Stage 2: around the best, priorities, parts, and group-wide waits.
  const Knobs base = best();
  if (base.communication_stream) {
    std::uint32_t buckets = 0;
    for (const GroupPlan& g : rulesFor(base, out.groups).groups) buckets = std::max(buckets, g.bucketCount());
    std::vector<Knobs> tails;
    for (std::uint32_t tail : {2u, 4u, 8u, buckets}) {
      if (tail < 2 || tail > buckets || base.order != Order::Ready) continue;
      Knobs k = base;
      k.priority_tail = tail;
      tails.push_back(k);
    }
    evaluateAll(tails);
    std::uint64_t largest = 0;  // of the collectives split into parts
    for (const RecordedGroup& g : out.groups)
      for (const CollectiveArgs& a : g.members)
        if (splittable(a.type)) largest = std::max(largest, a.send_bytes());
    const std::uint64_t bucket = base.bucket_bytes > 0 ? std::max(base.bucket_bytes, largest) : largest;
    // Each a variant of the best so far in its parts alone.
    std::vector<Knobs> splits;
    for (std::uint64_t div : {2ull, 4ull, 8ull}) {
      if (largest == 0) break;
      Knobs k = best();
      k.split_bytes = bucket / div;
      if (k.split_bytes > 0) splits.push_back(k);
    }
    evaluateAll(splits);
    Knobs waits = best();
    waits.per_bucket_waits = false;
    evaluate(waits);
    // Where the run has collectives on several communicators (a side stream's check, another
    // process group), each one's groups kept in place: on the one communication stream they
    // queue with the others.
    std::uint32_t comms = 0;
    for (const RecordedGroup& g : out.groups)
      for (const CollectiveArgs& a : g.members)
        if (a.comm_index < 32) comms |= 1u << a.comm_index;
    if ((comms & (comms - 1)) != 0) {
      std::vector<Knobs> keeps;
      for (std::uint32_t c = 0; c < 32; ++c) {
        if ((comms >> c & 1u) == 0) continue;
        Knobs k = best();
        k.keep_comms = 1u << c;
        keeps.push_back(k);
      }
      evaluateAll(keeps);
    }
  }
  total = done + (options.include_delayed ? 1 : 0);
  if (options.include_delayed) {
    Knobs k = best();
    k.delayed = true;
    k.communication_stream = true;
    evaluate(k);
  }

  std::stable_sort(out.candidates.begin(), out.candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.prediction.ok != b.prediction.ok) return a.prediction.ok;
    return a.prediction.iteration_ns < b.prediction.iteration_ns;
  });
  for (std::size_t i = 0; i < out.candidates.size(); ++i) {
    const Candidate& c = out.candidates[i];
    if (!c.prediction.ok || c.knobs.delayed) continue;
    if (c.gain >= options.min_gain) out.recommended = static_cast<int>(i);
    break;
  }
  if (out.recommended < 0) {
    const Candidate* b = nullptr;
    for (const Candidate& c : out.candidates)
      if (c.prediction.ok && !c.knobs.delayed) {
        b = &c;
        break;
      }
    out.note = b == nullptr ? "no schedule could be predicted"
                            : fmt::format("the best schedule is predicted to gain {:.1f}%, under the {:.0f}% a plan must "
                                          "gain to be recommended",
                                          100.0 * b->gain, 100.0 * options.min_gain);
  }
  return out;
}

}  // namespace syncopate::tuner
