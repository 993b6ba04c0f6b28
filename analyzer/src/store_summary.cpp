#include "store_summary.hpp"

#include <unordered_set>
#include <vector>

namespace syncopate::analyzer {

namespace {

// The rows of a table that start first and end last, among those `counts` accepts.
template <class Row, class Counts>
void markExtent(const std::vector<Row>& rows, std::vector<bool>& keep, Counts counts) {
  std::size_t first = rows.size(), last = rows.size();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!counts(rows[i])) continue;
    if (first == rows.size() || rows[i].start < rows[first].start) first = i;
    if (last == rows.size() || rows[i].end > rows[last].end) last = i;
  }
  if (first < rows.size()) keep[first] = true;
  if (last < rows.size()) keep[last] = true;
}

template <class Row>
std::vector<Row> kept(const std::vector<Row>& rows, const std::vector<bool>& keep) {
  std::vector<Row> out;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (keep[i]) out.push_back(rows[i]);
  return out;
}

bool shared(trace::OpKind kind) { return kind == trace::OpKind::Collective || kind == trace::OpKind::P2P; }

}  // namespace

StoreRows summaryRows(const StoreRows& rows, std::size_t store_strings) {
  std::unordered_set<trace::StreamId> streams;
  std::unordered_set<trace::ThreadId> threads;
  for (const trace::StreamRow& s : rows.streams) streams.insert(s.id);
  for (const trace::ThreadRow& t : rows.threads) threads.insert(t.id);
  const auto unknownString = [&](trace::StringId id) { return id != trace::kNoString && id >= store_strings; };

  std::vector<bool> keep_ops(rows.ops.size(), false);
  std::unordered_set<std::int64_t> correlations;
  for (std::size_t i = 0; i < rows.ops.size(); ++i) {
    const OpLite& op = rows.ops[i];
    const bool skipped = op.kind != trace::OpKind::HostSync && !streams.contains(op.stream);
    if (!shared(op.kind) && !skipped && !unknownString(op.name)) continue;
    keep_ops[i] = true;
    if (op.correlation != kUnknown) correlations.insert(op.correlation);
  }
  markExtent(rows.ops, keep_ops,
             [&](const OpLite& op) { return op.kind != trace::OpKind::HostSync && streams.contains(op.stream); });
  markExtent(rows.ops, keep_ops, [](const OpLite& op) { return op.kind == trace::OpKind::HostSync; });

  std::vector<bool> keep_calls(rows.calls.size(), false);
  for (std::size_t i = 0; i < rows.calls.size(); ++i) {
    const CallLite& c = rows.calls[i];
    keep_calls[i] = !threads.contains(c.thread) || unknownString(c.name) ||
                    (c.correlation != kUnknown && correlations.contains(c.correlation));
  }
  markExtent(rows.calls, keep_calls, [&](const CallLite& c) { return threads.contains(c.thread); });

  std::vector<bool> keep_ranges(rows.ranges.size(), false);
  for (std::size_t i = 0; i < rows.ranges.size(); ++i)
    keep_ranges[i] = unknownString(rows.ranges[i].name) || unknownString(rows.ranges[i].domain);
  markExtent(rows.ranges, keep_ranges, [](const RangeLite&) { return true; });

  StoreRows out;
  out.streams = rows.streams;
  out.threads = rows.threads;
  out.calls = kept(rows.calls, keep_calls);
  out.ops = kept(rows.ops, keep_ops);
  // A stream wait or event sync kept for its time or its damage would be counted again as
  // unmatched: each rank's are counted where it was read (LoadOptions::unmatched_events_elsewhere).
  for (OpLite& op : out.ops)
    if (!shared(op.kind)) op.event = kUnknown;
  out.collectives = rows.collectives;
  out.ranges = kept(rows.ranges, keep_ranges);
  out.diagnostics = rows.diagnostics;
  out.implausible_rows = rows.implausible_rows;
  out.torn = rows.torn;
  return out;
}

}  // namespace syncopate::analyzer
