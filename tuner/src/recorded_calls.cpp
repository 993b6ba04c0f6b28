#include "syncopate/tuner/recorded_calls.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace syncopate::tuner {

namespace {

using analyzer::Index;
using analyzer::kNone;

struct Entry {
  std::int64_t start = 0, end = 0;
  Index thread = kNone;
  Index op = kNone;                        // an op, or
  Index sync = kNone;                      // a host sync, or
  const InferredWait* inferred = nullptr;  // a wait only a runtime call shows
  std::uint64_t event = 0;                 // inferred: the first event it waits for
  // An op issued by no call: when it started (it belongs to the step it started in, as the
  // analyzer assigns it); `start` is when its stream had it.
  std::int64_t step_at = std::numeric_limits<std::int64_t>::min();
};

StreamHandle handleOf(const analyzer::RunModel& m, Index stream) {
  if (stream == kNone) return kLegacyStream;
  return static_cast<StreamHandle>(m.streams[stream].handle);
}

// A copy the host waits for: one made by a synchronous copy or fill call, or by an
// asynchronous copy from or to pageable host memory (Kineto names the memory kind: "Memcpy DtoH
// (Device -> Pageable)"). CUDA returns from one to pageable memory once the copy is done, and
// from one out of it once its stream's earlier work is done and the data is staged: taken as
// done too, the latest it can be. A copy a graph launch made never blocks its host.
bool synchronousCopy(const analyzer::RunModel& m, Index op) {
  const Index call = m.ops.launch[op];
  if (call == kNone) return false;
  const std::string_view call_name = m.str(m.api_calls.name[call]);
  const bool copy_call = call_name.starts_with("cudaMemcpy") || call_name.starts_with("cudaMemset") ||
                         call_name.starts_with("cuMemcpy") || call_name.starts_with("cuMemset");
  if (!copy_call) return false;
  if (call_name.find("Async") == std::string_view::npos) return true;
  const std::string_view name = m.str(m.ops.name[op]);
  return name.find("Pageable") != std::string_view::npos;
}

}  // namespace

void indexIterations(RecordedRank& rank) {
  rank.iteration_first_call.clear();
  for (std::size_t i = 0; i < rank.calls.size(); ++i) {
    const std::int64_t it = rank.calls[i].iteration;
    if (it >= 0 && (rank.iteration_first_call.empty() || rank.iteration_first_call.back().first != it)) {
      rank.iteration_first_call.emplace_back(it, i);
    }
  }
}

Call RecordedRank::call(std::size_t i) const {
  Call c = calls[i].call;
  c.touches = std::span<const Touch>(touches.data() + calls[i].touch_begin, calls[i].touch_count);
  return c;
}

trace::Result<RecordedRun> recordedCalls(const analyzer::RunModel& m, const analyzer::Iterations& iterations,
                                         const OpPointers& pointers) {
  RecordedRun out;
  const std::vector<std::int64_t> issued = issueTimes(m);
  const InferredWaits inferred = inferWaits(m, issued);
  out.assumptions.blocking_calls_inferred = inferred.blocking_calls;
  out.assumptions.stream_waits_inferred = inferred.stream_waits;
  out.assumptions.stream_waits_unplaced = inferred.stream_waits_unplaced;
  std::uint64_t inferred_events = 0;
  for (Index r = 0; r < m.ranks.size(); ++r) {
    const analyzer::RankInfo& info = m.ranks[r];
    out.imported |= info.source.starts_with("import");
    std::vector<Entry> entries;
    std::unordered_map<Index, std::vector<std::uint64_t>> records_after;  // op -> events recorded just after it
    entries.reserve(info.op_count + info.host_sync_count);
    for (Index op = info.first_op; op < info.first_op + info.op_count; ++op) {
      const Index call = m.ops.launch[op];
      if (call != kNone) {
        entries.push_back({m.api_calls.start[call], m.api_calls.end[call], m.api_calls.thread[call], op, kNone});
      } else {
        entries.push_back({issued[op], issued[op], kNone, op, kNone, nullptr, 0, m.ops.start[op]});
      }
    }
    for (Index s = info.first_host_sync; s < info.first_host_sync + info.host_sync_count; ++s) {
      const Index call = m.host_syncs.api_call[s];
      const Index thread = call == kNone ? kNone : m.api_calls.thread[call];
      entries.push_back({m.host_syncs.start[s], m.host_syncs.end[s], thread, kNone, s});
    }
    for (const InferredWait& w : inferred.per_rank[r]) {
      // An event recorded just after each op waited for, and the wait for those events.
      const std::uint64_t first_event = inferred_events + 1;
      for (const Index op : w.after) records_after[op].push_back(kInferredEventBit | ++inferred_events);
      entries.push_back({m.api_calls.start[w.call], m.api_calls.end[w.call], m.api_calls.thread[w.call], kNone, kNone,
                         &w, kInferredEventBit | first_event});
    }
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.start < b.start; });

    std::vector<analyzer::RankIteration> steps = r < iterations.per_rank.size() ? iterations.per_rank[r]
                                                                                : std::vector<analyzer::RankIteration>{};
    std::sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.host_start < b.host_start; });
    auto iterationAt = [&](std::int64_t t) -> std::int64_t {
      auto it = std::upper_bound(steps.begin(), steps.end(), t, [](std::int64_t v, const auto& s) { return v < s.host_start; });
      if (it == steps.begin()) return -1;
      --it;
      return t < it->host_end ? it->number : -1;
    };

    RecordedRank rank;
    rank.rank = r;
    rank.calls.reserve(entries.size());
    for (const Entry& e : entries) {
      RecordedCall rc;
      // An op issued by no call in the trace takes its place in the sequence from when its stream
      // had it (above), and is taken to have been issued when it started: the latest it can have
      // been, as nothing says what held it back (a CUDA graph's nodes waiting on an event from
      // outside the trace, say).
      const bool unlaunched = e.step_at != std::numeric_limits<std::int64_t>::min();
      rc.start = unlaunched ? e.step_at : e.start;
      rc.end = unlaunched ? e.step_at : e.end;
      rc.thread = e.thread;
      rc.iteration = iterationAt(rc.start);
      rc.touch_begin = static_cast<std::uint32_t>(rank.touches.size());
      Call& c = rc.call;
      c.id = static_cast<std::uint32_t>(rank.calls.size());
      if (e.inferred != nullptr) {
        // One wait per event, the host time the call's once; a blocking call that can have
        // waited for nothing is host time only (as a query is).
        const InferredWait& w = *e.inferred;
        if (w.after.empty() && w.kind == InferredWait::Kind::HostBlocks) c.kind = CallKind::EventQuery;
        for (std::size_t k = 0; k < w.after.size(); ++k) {
          RecordedCall wait = rc;
          wait.end = k + 1 == w.after.size() ? rc.end : rc.start;
          if (k + 1 == w.after.size() && w.kind == InferredWait::Kind::HostBlocks) {
            std::int64_t waited_end = rc.start;
            for (const Index op : w.after) waited_end = std::max(waited_end, m.ops.end[op]);
            wait.blocked_after_gpu_ns = rc.end - waited_end;
          }
          wait.call.id = static_cast<std::uint32_t>(rank.calls.size());
          wait.call.event = e.event + k;
          if (w.kind == InferredWait::Kind::HostBlocks) {
            wait.call.kind = CallKind::EventSync;
          } else {
            wait.call.kind = CallKind::StreamWait;
            wait.call.stream = handleOf(m, w.stream);
          }
          rank.calls.push_back(wait);
        }
        if (c.kind == CallKind::EventQuery) rank.calls.push_back(rc);
        continue;
      }
      if (e.sync != kNone) {
        switch (m.host_syncs.sync_kind[e.sync]) {
          case trace::SyncKind::Stream:
            c.kind = CallKind::StreamSync;
            c.stream = handleOf(m, m.host_syncs.stream[e.sync]);
            break;
          case trace::SyncKind::Event:
            c.kind = CallKind::EventSync;
            c.event = static_cast<std::uint64_t>(m.host_syncs.event_id[e.sync]);
            break;
          default: c.kind = CallKind::DeviceSync; break;
        }
        rank.calls.push_back(rc);
        continue;
      }
      const Index op = e.op;
      rc.op = op;
      c.stream = handleOf(m, m.ops.stream[op]);
      switch (m.ops.kind[op]) {
        case trace::OpKind::Kernel:
          c.kind = CallKind::Kernel;
          c.unknown_pointers = pointers.unknownLayout(op);
          for (const PointerArg& a : pointers.of(op))
            if (a.index != kUnknownLayout && a.address != 0) rank.touches.push_back({a.address, 0});
          break;
        case trace::OpKind::Memcpy:
        case trace::OpKind::Memset: {
          c.kind = m.ops.kind[op] == trace::OpKind::Memcpy ? CallKind::Memcpy : CallKind::Memset;
          c.synchronous = synchronousCopy(m, op);
          if (c.synchronous) rc.blocked_after_gpu_ns = std::max<std::int64_t>(0, rc.end - m.ops.end[op]);
          const auto bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(m.ops.bytes[op], 0));
          for (const PointerArg& a : pointers.of(op))
            if (a.index <= 1 && a.address != 0 && bytes > 0) rank.touches.push_back({a.address, bytes});
          break;
        }
        case trace::OpKind::Collective:
        case trace::OpKind::P2P: {
          c.kind = CallKind::Collective;
          c.blocking_stream = m.ops.stream[op] == kNone || !m.streams[m.ops.stream[op]].non_blocking;
          const Index row = m.collectiveOf(op);
          if (row == kNone) {
            // A transfer whose peer and size the trace does not give (Kineto's SendRecv kernels):
            // replayed as the kernel it is, with its measured time, matched with no other rank.
            c.kind = CallKind::Kernel;
            c.unknown_pointers = true;
            ++out.assumptions.p2p_without_arguments;
            break;
          }
          CollectiveArgs& a = c.collective;
          const std::int64_t comm = m.collectives.comm_id[row];
          auto ci = std::find(rank.comm_ids.begin(), rank.comm_ids.end(), comm);
          if (ci == rank.comm_ids.end()) ci = rank.comm_ids.insert(rank.comm_ids.end(), comm);
          a.comm = static_cast<std::uint64_t>(comm);
          rc.collective_seq = m.collectives.seq[row];
          a.comm_index = static_cast<std::uint32_t>(ci - rank.comm_ids.begin());
          a.comm_size = m.collectives.comm_size[row];
          a.type = m.collectives.coll_type[row];
          a.dtype = m.collectives.dtype[row];
          a.op = m.collectives.red_op[row];
          a.root_or_peer = m.collectives.root_or_peer[row];
          a.count = static_cast<std::uint64_t>(std::max<std::int64_t>(m.collectives.count[row], 0));
          a.send = pointers.address(op, 0);
          a.recv = pointers.address(op, 1);
          const bool needs_send = a.type != trace::CollType::Recv;
          const bool needs_recv = a.type != trace::CollType::Send;
          if ((needs_send && a.send == 0) || (needs_recv && a.recv == 0)) ++out.assumptions.collectives_without_buffers;
          break;
        }
        case trace::OpKind::EventRecord:
        case trace::OpKind::StreamWait:
          c.kind = m.ops.kind[op] == trace::OpKind::EventRecord ? CallKind::EventRecord : CallKind::StreamWait;
          c.event = static_cast<std::uint64_t>(m.eventOf(op));
          break;
        case trace::OpKind::HostSync: continue;  // host syncs come from the host-sync table
      }
      rc.touch_count = static_cast<std::uint32_t>(rank.touches.size()) - rc.touch_begin;
      rank.calls.push_back(rc);
      if (auto after = records_after.find(op); after != records_after.end()) {
        for (const std::uint64_t event : after->second) {
          RecordedCall record = rc;
          record.op = kNone;  // the op is the call's before it
          record.end = record.start;
          record.touch_count = 0;
          record.call.id = static_cast<std::uint32_t>(rank.calls.size());
          record.call.kind = CallKind::EventRecord;
          record.call.event = event;
          rank.calls.push_back(record);
        }
      }
    }
    indexIterations(rank);
    out.ranks.push_back(std::move(rank));
  }
  return out;
}

}  // namespace syncopate::tuner
