#include "syncopate/tuner/sharded_waits.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "syncopate/tuner/search.hpp"

namespace syncopate::tuner {
namespace {

constexpr std::uint64_t kShardedEventBit = 1ull << 61;  // apart from the application's and DDP's

// A synchronous collective's calls: the event on S and C's wait for it before, the event on C
// and S's wait for it after.
struct WaitedBlock {
  std::size_t record_before = 0, wait_before = 0, collective = 0, record_after = 0, wait_after = 0;
  StreamHandle compute = kLegacyStream, own = kLegacyStream;
};

std::optional<WaitedBlock> blockAt(const RecordedRank& rank, std::size_t i) {
  WaitedBlock b;
  b.collective = i;
  b.own = rank.calls[i].call.stream;
  // Before it: the last call on its stream is the wait, for an event recorded earlier elsewhere.
  std::size_t j = i;
  while (j-- > 0 && rank.calls[j].call.stream != b.own) {}
  if (j == static_cast<std::size_t>(-1) || rank.calls[j].call.kind != CallKind::StreamWait) return std::nullopt;
  b.wait_before = j;
  const std::uint64_t ready = rank.calls[j].call.event;
  while (j-- > 0 && !(rank.calls[j].call.kind == CallKind::EventRecord && rank.calls[j].call.event == ready)) {}
  if (j == static_cast<std::size_t>(-1)) return std::nullopt;
  b.record_before = j;
  b.compute = rank.calls[j].call.stream;
  // After it: the next call on its stream records an event, which the compute stream waits for.
  std::size_t k = i + 1;
  while (k < rank.calls.size() && rank.calls[k].call.stream != b.own) ++k;
  if (k == rank.calls.size() || rank.calls[k].call.kind != CallKind::EventRecord) return std::nullopt;
  b.record_after = k;
  const std::uint64_t done = rank.calls[k].call.event;
  for (++k; k < rank.calls.size(); ++k) {
    const Call& c = rank.calls[k].call;
    if (c.kind == CallKind::EventRecord && c.event == done) return std::nullopt;  // recorded again first
    if (c.kind == CallKind::StreamWait && c.event == done && c.stream == b.compute) break;
  }
  if (k == rank.calls.size()) return std::nullopt;
  b.wait_after = k;
  return b;
}

// The first call after `i` on `stream` that touches collective i's buffers; kNoCall: none.
std::size_t firstTouchOn(const RecordedRank& rank, std::size_t i, StreamHandle stream) {
  const CollectiveArgs& a = rank.calls[i].call.collective;
  for (std::size_t k = i + 1; k < rank.calls.size(); ++k) {
    if (rank.calls[k].call.stream != stream) continue;
    const Call c = rank.call(k);
    if (touches(c, a.send, a.send + a.send_bytes()) || touches(c, a.recv, a.recv + a.recv_bytes())) return k;
  }
  return std::numeric_limits<std::size_t>::max();
}

RecordedCall written(const RecordedCall& anchor, bool after_anchor, CallKind kind, StreamHandle stream,
                     std::uint64_t event) {
  RecordedCall rc;
  rc.call.kind = kind;
  rc.call.stream = stream;
  rc.call.event = event;
  rc.start = rc.end = after_anchor ? anchor.end : anchor.start;
  rc.thread = anchor.thread;
  rc.iteration = anchor.iteration;
  return rc;
}

// A call to write: new (no touches), or a recorded one moved (its own touches).
struct Placed {
  RecordedCall call;
  bool moved = false;
};

}  // namespace

trace::Result<RecordedRun> overlapWaitedCollectives(const WhatIfModel& model, const ShardedOptimizerRun& optimizer,
                                                    bool grad_reduce, bool param_gather) {
  const RecordedRun& run = model.calls();
  RecordedRun out;
  out.assumptions = run.assumptions;
  out.imported = run.imported;
  std::uint64_t next_event = kShardedEventBit;
  for (const RecordedRank& rank : run.ranks) {
    std::vector<bool> dropped(rank.calls.size(), false);
    std::map<std::size_t, std::vector<Placed>> before, after;
    for (std::int64_t n = model.firstIteration(); n <= model.lastIteration(); ++n) {
      std::vector<std::size_t> reduces, gathers;
      for (std::size_t i = 0; i < rank.calls.size(); ++i) {
        const RecordedCall& rc = rank.calls[i];
        if (rc.iteration != n || rc.call.kind != CallKind::Collective) continue;
        if (rc.call.collective.comm_index != optimizer.comm_index) continue;
        if (rc.call.collective.type == trace::CollType::ReduceScatter) {
          reduces.push_back(i);
          gathers.clear();  // the step's all-gathers come after its last reduce-scatter
        } else if (rc.call.collective.type == trace::CollType::AllGather) {
          gathers.push_back(i);
        }
      }
      std::vector<WaitedBlock> blocks;
      for (std::size_t i : grad_reduce ? reduces : std::vector<std::size_t>{}) {
        const std::optional<WaitedBlock> b = blockAt(rank, i);
        if (!b) {
          return trace::failure(fmt::format("rank {}'s reduce-scatter (call {} of iteration {}) is not waited for as a "
                                            "synchronous collective is (an event, a wait, the collective, an event, a "
                                            "wait)",
                                            rank.rank, i, n));
        }
        blocks.push_back(*b);
      }
      // Reduce-scatters, each after what last wrote its bucket, in order.
      std::size_t launched_after = 0;
      for (const WaitedBlock& b : blocks) {
        for (std::size_t k : {b.record_before, b.wait_before, b.collective, b.record_after, b.wait_after}) dropped[k] = true;
        launched_after = std::max(launched_after, producerOf(rank, b.collective));
        const RecordedCall& anchor = rank.calls[launched_after];
        const std::uint64_t ready = next_event++, done = next_event++;
        auto& calls = after[launched_after];
        calls.push_back({written(anchor, true, CallKind::EventRecord, b.compute, ready)});
        calls.push_back({written(anchor, true, CallKind::StreamWait, b.own, ready)});
        RecordedCall moved = rank.calls[b.collective];
        moved.start = moved.end = anchor.end;
        calls.push_back({moved, true});
        calls.push_back({written(anchor, true, CallKind::EventRecord, b.own, done)});
        const std::size_t needed = firstTouchOn(rank, b.collective, b.compute);
        if (needed < rank.calls.size()) {
          before[needed].push_back({written(rank.calls[needed], false, CallKind::StreamWait, b.compute, done)});
        }
      }
      if (!param_gather || gathers.empty()) continue;
      std::vector<std::pair<std::size_t, WaitedBlock>> by_need;  // (first touch on S, block)
      for (std::size_t i : gathers) {
        const std::optional<WaitedBlock> b = blockAt(rank, i);
        if (!b) {
          return trace::failure(fmt::format("rank {}'s all-gather (call {} of iteration {}) is not waited for as a "
                                            "synchronous collective is (an event, a wait, the collective, an event, a "
                                            "wait)",
                                            rank.rank, i, n));
        }
        by_need.emplace_back(firstTouchOn(rank, i, b->compute), *b);
      }
      // All-gathers where the first was, first needed first.
      const std::size_t where = by_need.front().second.record_before;
      std::stable_sort(by_need.begin(), by_need.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [needed, b] : by_need) {
        for (std::size_t k : {b.record_before, b.wait_before, b.collective, b.record_after, b.wait_after}) dropped[k] = true;
        const RecordedCall& anchor = rank.calls[where];
        const std::uint64_t ready = next_event++, done = next_event++;
        auto& calls = before[where];
        calls.push_back({written(anchor, false, CallKind::EventRecord, b.compute, ready)});
        calls.push_back({written(anchor, false, CallKind::StreamWait, b.own, ready)});
        RecordedCall moved = rank.calls[b.collective];
        moved.start = moved.end = anchor.start;
        calls.push_back({moved, true});
        calls.push_back({written(anchor, false, CallKind::EventRecord, b.own, done)});
        if (needed < rank.calls.size()) {
          before[needed].push_back({written(rank.calls[needed], false, CallKind::StreamWait, b.compute, done)});
        }
      }
    }
    RecordedRank r;
    r.rank = rank.rank;
    r.comm_ids = rank.comm_ids;
    auto append = [&](Placed p) {
      RecordedCall& rc = p.call;
      rc.call.id = static_cast<std::uint32_t>(r.calls.size());
      const std::uint32_t begin = static_cast<std::uint32_t>(r.touches.size());
      if (p.moved) {
        for (std::uint32_t k = 0; k < rc.touch_count; ++k) r.touches.push_back(rank.touches[rc.touch_begin + k]);
      } else {
        rc.touch_count = 0;
      }
      rc.touch_begin = begin;
      r.calls.push_back(std::move(rc));
    };
    for (std::size_t i = 0; i < rank.calls.size(); ++i) {
      if (auto b = before.find(i); b != before.end())
        for (const Placed& p : b->second) append(p);
      if (!dropped[i]) append({rank.calls[i], true});
      if (auto a = after.find(i); a != after.end())
        for (const Placed& p : a->second) append(p);
    }
    indexIterations(r);
    out.ranks.push_back(std::move(r));
  }
  return out;
}

}  // namespace syncopate::tuner
