#include "syncopate/tuner/inferred_waits.hpp"

#include <algorithm>
#include <limits>

#include "syncopate/analyzer/sync_calls.hpp"

namespace syncopate::tuner {

namespace {

using analyzer::Index;
using analyzer::kNone;

bool isMarker(trace::OpKind k) {
  return k == trace::OpKind::EventRecord || k == trace::OpKind::StreamWait || k == trace::OpKind::HostSync;
}

// On every stream of `rank` but `except`: the last op issued by `issued_by` that had ended by
// `by` (ops of a stream run in order, so only the few that started before `by` are looked at).
std::vector<Index> lastEnded(const analyzer::RunModel& m, const std::vector<std::int64_t>& issued, Index rank,
                             Index except, std::int64_t issued_by, std::int64_t by) {
  std::vector<Index> out;
  const analyzer::RankInfo& r = m.ranks[rank];
  for (Index st = r.first_stream; st < r.first_stream + r.stream_count; ++st) {
    if (st == except) continue;
    const analyzer::StreamInfo& s = m.streams[st];
    const auto first = m.ops.start.begin() + s.first_op;
    Index i = static_cast<Index>(std::upper_bound(first, first + s.op_count, by) - m.ops.start.begin());
    while (i-- > s.first_op) {
      if (isMarker(m.ops.kind[i]) || m.ops.end[i] > by || issued[i] > issued_by) continue;
      out.push_back(i);
      break;
    }
  }
  return out;
}

// The first op of `stream` issued after `t`, or kNone. A stream runs its ops in issue order,
// so its ops are in issue order too.
Index firstIssuedAfter(const analyzer::RunModel& m, const std::vector<std::int64_t>& issued, Index stream,
                       std::int64_t t) {
  const analyzer::StreamInfo& s = m.streams[stream];
  Index lo = s.first_op, hi = s.first_op + s.op_count;
  while (lo < hi) {
    const Index mid = lo + (hi - lo) / 2;
    if (issued[mid] <= t) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  for (Index i = lo; i < s.first_op + s.op_count; ++i)
    if (!isMarker(m.ops.kind[i])) return i;
  return kNone;
}

}  // namespace

std::vector<std::int64_t> issueTimes(const analyzer::RunModel& m) {
  std::vector<std::int64_t> out(m.ops.size());
  for (const analyzer::StreamInfo& s : m.streams) {
    std::int64_t next = std::numeric_limits<std::int64_t>::max();
    for (Index op = s.first_op + s.op_count; op-- > s.first_op;) {
      const Index call = m.ops.launch[op];
      out[op] = call != kNone ? m.api_calls.start[call] : std::min(m.ops.start[op], next);
      next = std::min(next, out[op]);
    }
  }
  return out;
}

InferredWaits inferWaits(const analyzer::RunModel& m, const std::vector<std::int64_t>& issued) {
  InferredWaits out;
  out.per_rank.resize(m.ranks.size());
  const std::size_t calls = m.api_calls.size();
  // What each call issued: the first GPU op it launched, and whether the trace already holds
  // the wait it made (a stream-wait op, a host-sync row).
  std::vector<Index> launched(calls, kNone);
  std::vector<bool> recorded_wait(calls, false);
  for (Index op = 0; op < m.ops.size(); ++op) {
    const Index call = m.ops.launch[op];
    if (call == kNone) continue;
    if (m.ops.kind[op] == trace::OpKind::StreamWait) recorded_wait[call] = true;
    if (!isMarker(m.ops.kind[op]) && launched[call] == kNone) launched[call] = op;
  }
  for (Index s = 0; s < m.host_syncs.size(); ++s)
    if (m.host_syncs.api_call[s] != kNone) recorded_wait[m.host_syncs.api_call[s]] = true;

  // Backwards through each thread's calls (api_calls is ordered by thread, then start), so the
  // next launch of the thread is known at every call.
  Index next_launch = kNone;
  for (std::size_t i = calls; i-- > 0;) {
    const Index c = static_cast<Index>(i);
    if (i + 1 == calls || m.api_calls.thread[c] != m.api_calls.thread[c + 1]) next_launch = kNone;
    if (launched[c] != kNone) {
      next_launch = launched[c];
      continue;
    }
    if (recorded_wait[c]) continue;
    const auto sync = analyzer::syncCallNamed(m.str(m.api_calls.name[c]));
    if (!sync) continue;
    const Index rank = m.rankOfCall(c);
    auto& list = out.per_rank[rank];
    const std::int64_t start = m.api_calls.start[c];
    if (sync->what == analyzer::SyncCallClass::Blocks) {
      list.push_back(
          {c, InferredWait::Kind::HostBlocks, kNone, lastEnded(m, issued, rank, kNone, start, m.api_calls.end[c])});
      ++out.blocking_calls;
    } else if (sync->what == analyzer::SyncCallClass::StreamWait) {
      if (next_launch == kNone) {
        ++out.stream_waits_unplaced;
        continue;
      }
      // The stream waits from the call on, so the first op issued to it after the call, from
      // whatever thread, already started after the event.
      const Index stream = m.ops.stream[next_launch];
      const Index first = firstIssuedAfter(m, issued, stream, start);
      const std::int64_t by = m.ops.start[first == kNone ? next_launch : first];
      list.push_back({c, InferredWait::Kind::StreamWaits, stream, lastEnded(m, issued, rank, stream, start, by)});
      ++out.stream_waits;
    }
  }
  for (auto& list : out.per_rank) {
    std::sort(list.begin(), list.end(), [&](const InferredWait& a, const InferredWait& b) {
      return m.api_calls.start[a.call] < m.api_calls.start[b.call];
    });
  }
  return out;
}

}  // namespace syncopate::tuner
