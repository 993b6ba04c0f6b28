#include "syncopate/tuner/sharded_waits.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "syncopate/tuner/calls_writer.hpp"
#include "syncopate/tuner/search.hpp"

namespace syncopate::tuner {
namespace {

constexpr std::uint64_t kShardedEventBit = 1ull << 60;  // apart from the application's and DDP's rewrites'

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
  const std::optional<ReadyPair> ready = readyPairBefore(rank, i);
  if (!ready) return std::nullopt;
  b.wait_before = ready->wait;
  b.record_before = ready->record;
  b.compute = rank.calls[ready->record].call.stream;
  // After it: the next call on its stream records an event, which the compute stream waits for.
  std::size_t k = nextCallOn(rank, i, b.own, rank.calls.size());
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

// The first call after `i` on `stream` that touches collective i's buffers (its input or its
// result: a write over the input must wait too); past the rank's calls when none does.
std::size_t firstTouchOn(const RecordedRank& rank, std::size_t i, StreamHandle stream) {
  const CollectiveArgs& a = rank.calls[i].call.collective;
  for (std::size_t k = i + 1; k < rank.calls.size(); ++k) {
    if (rank.calls[k].call.stream != stream) continue;
    if (touchesBuffersOf(rank.call(k), a)) return k;
  }
  return std::numeric_limits<std::size_t>::max();
}

// One rank's rewrite: its synchronous blocks moved.
struct RankEdits {
  const RecordedRank& rank;
  CallEdits edits;
  std::uint64_t& next_event;

  // Moves block `b` to `anchor` (after it, or before it), with new events, and has the compute
  // stream wait for it just before call `needed` (none when past the rank's calls).
  void move(const WaitedBlock& b, std::size_t anchor, bool after_anchor, std::size_t needed) {
    for (std::size_t k : {b.record_before, b.wait_before, b.collective, b.record_after, b.wait_after}) {
      edits.dropped[k] = true;
    }
    const RecordedCall& at = rank.calls[anchor];
    const std::uint64_t ready = next_event++, done = next_event++;
    std::vector<CallEdits::Written>& calls = after_anchor ? edits.after[anchor] : edits.before[anchor];
    calls.push_back({writtenAt(at, after_anchor, CallKind::EventRecord, b.compute, ready)});
    calls.push_back({writtenAt(at, after_anchor, CallKind::StreamWait, b.own, ready)});
    RecordedCall moved = rank.calls[b.collective];
    moved.start = moved.end = after_anchor ? at.end : at.start;
    calls.push_back({moved, true});
    calls.push_back({writtenAt(at, after_anchor, CallKind::EventRecord, b.own, done)});
    if (needed < rank.calls.size()) {
      edits.before[needed].push_back({writtenAt(rank.calls[needed], false, CallKind::StreamWait, b.compute, done)});
    }
  }
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
    RankEdits moves{rank, CallEdits(rank.calls.size()), next_event};
    for (std::int64_t n = model.firstIteration(); n <= model.lastIteration(); ++n) {
      const OptimizerCollectives step = optimizerCollectives(rank, n, optimizer.comm);
      const std::vector<std::size_t>& reduces = step.reduces;
      const std::vector<std::size_t>& gathers = step.gathers;
      // Each collective's synchronous block, or the sentence why one is not.
      const auto blocksOf = [&](const std::vector<std::size_t>& calls,
                                const char* what) -> trace::Result<std::vector<WaitedBlock>> {
        std::vector<WaitedBlock> blocks;
        for (std::size_t i : calls) {
          const std::optional<WaitedBlock> b = blockAt(rank, i);
          if (!b) {
            return trace::failure(fmt::format("rank {}'s {} (call {} of iteration {}) is not waited for as a synchronous "
                                              "collective is (an event, a wait, the collective, an event, a wait)",
                                              rank.rank, what, i, n));
          }
          blocks.push_back(*b);
        }
        return blocks;
      };
      auto reduce_blocks = blocksOf(grad_reduce ? reduces : std::vector<std::size_t>{}, "reduce-scatter");
      if (!reduce_blocks.ok()) return reduce_blocks.status();
      // Reduce-scatters, each after what last wrote its bucket, in order.
      std::size_t launched_after = 0;
      for (const WaitedBlock& b : *reduce_blocks) {
        launched_after = std::max(launched_after, producerOf(rank, b.collective));
        moves.move(b, launched_after, true, firstTouchOn(rank, b.collective, b.compute));
      }
      if (!param_gather || gathers.empty()) continue;
      auto gather_blocks = blocksOf(gathers, "all-gather");
      if (!gather_blocks.ok()) return gather_blocks.status();
      std::vector<std::pair<std::size_t, WaitedBlock>> by_need;  // (first touch on S, block)
      for (const WaitedBlock& b : *gather_blocks) by_need.emplace_back(firstTouchOn(rank, b.collective, b.compute), b);
      // All-gathers where the first was, first needed first: each must have been written before.
      const std::size_t where = gather_blocks->front().record_before;
      for (const auto& [needed, b] : by_need) {
        if (producerOf(rank, b.collective) >= where) {
          return trace::failure(fmt::format("rank {}'s all-gather (call {} of iteration {}) gathers parameters written "
                                            "after the step's first all-gather was issued, so they cannot all be issued "
                                            "there",
                                            rank.rank, b.collective, n));
        }
      }
      std::stable_sort(by_need.begin(), by_need.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [needed, b] : by_need) moves.move(b, where, false, needed);
    }
    out.ranks.push_back(moves.edits.applyTo(rank));
  }
  return out;
}

}  // namespace syncopate::tuner
