#include "collective_matching.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <tuple>

#include "diagnostic_row.hpp"
#include "issue_order.hpp"

namespace syncopate::analyzer {

namespace {

bool isP2P(trace::CollType t) { return t == trace::CollType::Send || t == trace::CollType::Recv; }

}  // namespace

void addEventWaitFlows(RunModel& m, const UnmatchedEvents& elsewhere) {
  // Records of each (rank, event), in issue order.
  struct Record {
    Index rank;
    std::int64_t event;
    std::int64_t issued;
    Index op;
  };
  std::vector<Record> records;
  for (std::size_t i = 0; i < m.event_markers.size(); ++i) {
    const Index op = m.event_markers.op[i];
    if (m.ops.kind[op] != trace::OpKind::EventRecord) continue;
    records.push_back({m.rankOfOp(op), m.event_markers.event_id[i], issueTime(m, op), op});
  }
  auto key = [](const Record& r) { return std::tie(r.rank, r.event, r.issued, r.op); };
  std::sort(records.begin(), records.end(), [&](const Record& a, const Record& b) { return key(a) < key(b); });
  std::int64_t unmatched = elsewhere.waits;
  for (std::size_t i = 0; i < m.event_markers.size(); ++i) {
    const Index op = m.event_markers.op[i];
    if (m.ops.kind[op] != trace::OpKind::StreamWait) continue;
    const Record probe{m.rankOfOp(op), m.event_markers.event_id[i], issueTime(m, op), kNone};
    auto it = std::upper_bound(records.begin(), records.end(), probe,
                               [&](const Record& a, const Record& b) { return key(a) < key(b); });
    if (it == records.begin() || std::prev(it)->rank != probe.rank || std::prev(it)->event != probe.event) {
      ++unmatched;  // waiting on an event recorded before the recording started: no dependency
      continue;
    }
    m.flows.add(NodeRef::op(std::prev(it)->op), NodeRef::op(op), FlowKind::EventWait);
  }
  if (unmatched > 0)
    m.addDiagnostic(diagnosticRow<trace::diagnostics::event_waits_unmatched>("analyzer", unmatched));
  // Host syncs on an event no record of which was issued before them draw no flow either: the
  // critical path takes each to have waited for what a stream or device sync waits for.
  const auto& s = m.host_syncs;
  std::int64_t syncs_unmatched = elsewhere.syncs;
  for (Index h = 0; h < s.size(); ++h) {
    if (s.sync_kind[h] != trace::SyncKind::Event || s.event_id[h] == kUnknown) continue;
    const Record probe{s.rank[h], s.event_id[h], s.api_call[h] != kNone ? m.api_calls.start[s.api_call[h]] : s.start[h], kNone};
    auto it = std::upper_bound(records.begin(), records.end(), probe,
                               [&](const Record& a, const Record& b) { return key(a) < key(b); });
    syncs_unmatched += it == records.begin() || std::prev(it)->rank != probe.rank || std::prev(it)->event != probe.event;
  }
  if (syncs_unmatched > 0)
    m.addDiagnostic(diagnosticRow<trace::diagnostics::event_syncs_unmatched>("analyzer", syncs_unmatched));
  m.unmatched_events = {unmatched, syncs_unmatched};
}

void matchCollectives(RunModel& m) {
  auto& c = m.collectives;
  auto& mt = m.matches;
  // Comm rank of a participant; the rank index stands in when the store did not say.
  auto commRank = [&](Index row) {
    return c.comm_rank[row] >= 0 ? c.comm_rank[row] : static_cast<std::int32_t>(m.rankOfOp(c.op[row]));
  };

  // Collectives: group by (communicator, sequence number).
  std::vector<Index> rows;
  for (Index i = 0; i < c.size(); ++i)
    if (!isP2P(c.coll_type[i])) rows.push_back(i);
  std::sort(rows.begin(), rows.end(), [&](Index a, Index b) {
    return std::make_tuple(c.comm_id[a], c.seq[a], commRank(a), a) < std::make_tuple(c.comm_id[b], c.seq[b], commRank(b), b);
  });
  std::int64_t duplicates = 0, type_mismatches = 0;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    while (j < rows.size() && c.comm_id[rows[j]] == c.comm_id[rows[i]] && c.seq[rows[j]] == c.seq[rows[i]]) ++j;
    const auto match = static_cast<Index>(mt.size());
    mt.comm_id.push_back(c.comm_id[rows[i]]);
    mt.seq.push_back(c.seq[rows[i]]);
    mt.coll_type.push_back(c.coll_type[rows[i]]);
    mt.first.push_back(static_cast<Index>(mt.participants.size()));
    std::int32_t expected = -1;
    bool mismatch = false;
    for (std::size_t k = i; k < j; ++k) {
      const Index row = rows[k];
      if (k > i && commRank(row) == commRank(rows[k - 1])) {
        ++duplicates;  // the same rank twice in one call: keep the first
        continue;
      }
      mismatch |= c.coll_type[row] != c.coll_type[rows[i]];
      expected = std::max(expected, c.comm_size[row]);
      c.match[row] = match;
      mt.participants.push_back(row);
    }
    type_mismatches += mismatch ? 1 : 0;
    mt.count.push_back(static_cast<Index>(mt.participants.size()) - mt.first.back());
    mt.expected.push_back(expected);
    const auto parts = mt.of(match);
    for (std::size_t k = 1; k < parts.size(); ++k)
      m.flows.add(NodeRef::op(c.op[parts[0]]), NodeRef::op(c.op[parts[k]]), FlowKind::Collective);
    i = j;
  }
  if (duplicates > 0)
    m.addDiagnostic(diagnosticRow<trace::diagnostics::collective_rank_twice>("analyzer", duplicates));
  if (type_mismatches > 0)
    m.addDiagnostic(diagnosticRow<trace::diagnostics::collective_type_mismatch>("analyzer", type_mismatches));

  // Point to point: the k-th send from a to b on a communicator meets the k-th receive at b from a.
  using Key = std::tuple<std::int64_t, std::int32_t, std::int32_t>;  // comm, sender, receiver
  std::map<Key, std::vector<Index>> sends, recvs;
  for (Index i = 0; i < c.size(); ++i) {
    if (!isP2P(c.coll_type[i])) continue;
    if (c.root_or_peer[i] < 0) continue;
    if (c.coll_type[i] == trace::CollType::Send)
      sends[{c.comm_id[i], commRank(i), c.root_or_peer[i]}].push_back(i);
    else
      recvs[{c.comm_id[i], c.root_or_peer[i], commRank(i)}].push_back(i);
  }
  std::int64_t unmatched = 0;
  auto bySeq = [&](Index a, Index b) { return std::tie(c.seq[a], a) < std::tie(c.seq[b], b); };
  for (auto& [key, s] : sends) {
    auto it = recvs.find(key);
    std::vector<Index> empty;
    auto& r = it == recvs.end() ? empty : it->second;
    std::sort(s.begin(), s.end(), bySeq);
    std::sort(r.begin(), r.end(), bySeq);
    const std::size_t n = std::min(s.size(), r.size());
    unmatched += static_cast<std::int64_t>(s.size() + r.size() - 2 * n);
    for (std::size_t k = 0; k < n; ++k) {
      const auto match = static_cast<Index>(mt.size());
      mt.comm_id.push_back(std::get<0>(key));
      mt.seq.push_back(static_cast<std::int64_t>(k));
      mt.coll_type.push_back(trace::CollType::Send);
      mt.expected.push_back(2);
      mt.first.push_back(static_cast<Index>(mt.participants.size()));
      mt.count.push_back(2);
      mt.participants.push_back(s[k]);
      mt.participants.push_back(r[k]);
      c.match[s[k]] = c.match[r[k]] = match;
      m.flows.add(NodeRef::op(c.op[s[k]]), NodeRef::op(c.op[r[k]]), FlowKind::SendRecv);
    }
    if (it != recvs.end()) recvs.erase(it);
  }
  for (const auto& [key, r] : recvs) unmatched += static_cast<std::int64_t>(r.size());
  if (unmatched > 0)
    m.addDiagnostic(diagnosticRow<trace::diagnostics::p2p_unmatched>("analyzer", unmatched));
}

}  // namespace syncopate::analyzer
