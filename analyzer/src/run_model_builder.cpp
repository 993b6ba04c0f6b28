#include "syncopate/analyzer/run_model_builder.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>
#include <unordered_map>

#include "collective_matching.hpp"
#include "diagnostic_row.hpp"
#include "permute.hpp"

namespace syncopate::analyzer {

Index RunModelBuilder::addRank(RankInfo info) {
  model_.ranks.push_back(std::move(info));
  return static_cast<Index>(model_.ranks.size() - 1);
}

Index RunModelBuilder::addStream(Index rank, std::int32_t device, std::int64_t handle,
                                 std::string_view name, std::int32_t priority, std::int64_t store_id,
                                 bool non_blocking) {
  StreamInfo s;
  s.non_blocking = non_blocking;
  s.rank = rank;
  s.device = device;
  s.handle = handle;
  s.priority = priority;
  s.name = intern(name);
  s.store_id = store_id;
  model_.streams.push_back(s);
  return static_cast<Index>(model_.streams.size() - 1);
}

Index RunModelBuilder::addThread(Index rank, std::int64_t tid, std::string_view name, std::int64_t store_id) {
  ThreadInfo t;
  t.rank = rank;
  t.tid = tid;
  t.name = intern(name);
  t.store_id = store_id;
  model_.threads.push_back(t);
  return static_cast<Index>(model_.threads.size() - 1);
}

Index RunModelBuilder::addApiCall(const ApiCallInput& row) {
  auto& t = model_.api_calls;
  t.start.push_back(row.start);
  t.end.push_back(std::max(row.start, row.end));
  t.thread.push_back(row.thread);
  t.name.push_back(row.name);
  t.domain.push_back(row.domain);
  checkStoreId("api call", t.store_id.size(), row.store_id);
  t.store_id.push_back(row.store_id);
  return static_cast<Index>(t.size() - 1);
}

void RunModelBuilder::checkStoreId(std::string_view table, std::size_t row, std::int64_t id) {
  if (StoreIdColumn::fits(id) || !unfit_store_id_.empty()) return;
  unfit_store_id_ = std::string(table) + " " + std::to_string(row) + " has store id " + std::to_string(id);
}

// Kernels are classified by name, and a run launches the same few hundred kernels millions of
// times: the class is computed once per name.
OpClass RunModelBuilder::classOf(trace::OpKind kind, StringId name) {
  if (kind != trace::OpKind::Kernel) return classify(kind, {});
  if (name >= kernel_class_.size()) kernel_class_.resize(std::max<std::size_t>(name + 1, model_.strings.size()), kUnclassified);
  if (kernel_class_[name] == kUnclassified) kernel_class_[name] = static_cast<std::uint8_t>(classify(kind, model_.strings[name]));
  return static_cast<OpClass>(kernel_class_[name]);
}

Index RunModelBuilder::addOp(const OpInput& row) {
  auto& t = model_.ops;
  t.start.push_back(row.start);
  t.end.push_back(std::max(row.start, row.end));
  t.name.push_back(row.name);
  t.stream.push_back(row.stream);
  t.kind.push_back(row.kind);
  t.op_class.push_back(classOf(row.kind, row.name));
  t.bytes.push_back(row.bytes);
  t.launch.push_back(row.api_call);
  checkStoreId("op", t.store_id.size(), row.store_id);
  t.store_id.push_back(row.store_id);
  if (row.event_id != kUnknown) op_events_.push_back({static_cast<Index>(t.size() - 1), row.event_id});
  return static_cast<Index>(t.size() - 1);
}

void RunModelBuilder::addCollective(Index op, const CollectiveInput& row) { collectives_.push_back({op, row}); }

Index RunModelBuilder::addHostSync(const HostSyncInput& row) {
  auto& t = model_.host_syncs;
  t.start.push_back(row.start);
  t.end.push_back(std::max(row.start, row.end));
  t.rank.push_back(row.rank);
  t.api_call.push_back(row.api_call);
  t.sync_kind.push_back(row.sync_kind);
  t.stream.push_back(row.stream);
  t.event_id.push_back(row.event_id);
  t.store_id.push_back(row.store_id);
  return static_cast<Index>(t.size() - 1);
}

void RunModelBuilder::addRange(const RangeInput& row) {
  auto& t = model_.ranges;
  t.start.push_back(row.start);
  t.end.push_back(std::max(row.start, row.end));
  t.rank.push_back(row.rank);
  t.thread.push_back(row.thread);
  t.domain.push_back(row.domain);
  t.name.push_back(row.name);
  t.depth.push_back(row.depth);
  t.parent.push_back(kNone);
  t.store_id.push_back(row.store_id);
}

void RunModelBuilder::addDiagnostic(trace::DiagnosticRow diagnostic) { model_.addDiagnostic(std::move(diagnostic)); }

void RunModelBuilder::reserveOps(std::size_t n) {
  auto& t = model_.ops;
  t.start.reserve(n), t.end.reserve(n), t.name.reserve(n), t.stream.reserve(n), t.kind.reserve(n);
  t.op_class.reserve(n), t.bytes.reserve(n), t.launch.reserve(n), t.store_id.reserve(n);
}

void RunModelBuilder::reserveApiCalls(std::size_t n) {
  auto& t = model_.api_calls;
  t.start.reserve(n), t.end.reserve(n), t.thread.reserve(n), t.name.reserve(n), t.domain.reserve(n);
  t.store_id.reserve(n);
}

namespace {

trace::Status badRef(std::string_view what, std::size_t row, std::string_view target, Index value) {
  return trace::failure(std::string(what) + " " + std::to_string(row) + " refers to " + std::string(target) + " " +
                        std::to_string(value) + ", which does not exist");
}

// Stable order of `n` rows grouped by `bucket(row)` (0..buckets-1) and, within a bucket, by
// `less`. Rows usually arrive sorted within their bucket (stores are read in index order),
// so each bucket is only sorted when it is not already.
template <class Bucket, class Less>
std::vector<Index> bucketOrder(std::size_t n, std::size_t buckets, Bucket bucket, Less less,
                               std::vector<Index>* bucket_first = nullptr) {
  std::vector<Index> first(buckets + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++first[bucket(static_cast<Index>(i)) + 1];
  std::partial_sum(first.begin(), first.end(), first.begin());
  std::vector<Index> order(n);
  std::vector<Index> fill(first.begin(), first.end() - 1);
  for (std::size_t i = 0; i < n; ++i) order[fill[bucket(static_cast<Index>(i))]++] = static_cast<Index>(i);
  for (std::size_t b = 0; b < buckets; ++b) {
    auto lo = order.begin() + first[b], hi = order.begin() + first[b + 1];
    if (!std::is_sorted(lo, hi, less)) std::stable_sort(lo, hi, less);
  }
  if (bucket_first) *bucket_first = std::move(first);
  return order;
}

// Nesting of ranges on each thread: the parent of each range, and the depth of those that did
// not come with one.
void computeNesting(RangeTable& r) {
  std::vector<Index> open;  // ranges enclosing the current position, outermost first
  Index current_thread = kNone, current_rank = kNone;
  r.parent.assign(r.size(), kNone);
  // Ranges are sorted by (rank, thread, start, end descending) when this runs.
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (r.rank[i] != current_rank || r.thread[i] != current_thread) {
      open.clear();
      current_rank = r.rank[i];
      current_thread = r.thread[i];
    }
    while (!open.empty() && r.end[open.back()] <= r.start[i]) open.pop_back();
    // A range that outlives the innermost open one overlaps it rather than nesting in it.
    while (!open.empty() && r.end[open.back()] < r.end[i]) open.pop_back();
    if (r.depth[i] < 0) r.depth[i] = static_cast<std::int16_t>(std::min<std::size_t>(open.size(), 32767));
    r.parent[i] = open.empty() ? kNone : open.back();
    open.push_back(static_cast<Index>(i));
  }
}

}  // namespace

trace::Status RunModelBuilder::validate() const {
  const auto& m = model_;
  const auto nr = static_cast<Index>(m.ranks.size()), ns = static_cast<Index>(m.streams.size());
  const auto nt = static_cast<Index>(m.threads.size()), nc = static_cast<Index>(m.api_calls.size());
  const auto no = static_cast<Index>(m.ops.size());
  if (!unfit_store_id_.empty())
    return trace::failure(unfit_store_id_ + ", outside the 0 to " + std::to_string(StoreIdColumn::kMax) +
                          " a model keeps: a store's writer numbers its rows from 1, and no store holds that many, so the "
                          "store is corrupt");
  for (std::size_t i = 0; i < m.streams.size(); ++i)
    if (m.streams[i].rank >= nr) return badRef("stream", i, "rank", m.streams[i].rank);
  for (std::size_t i = 0; i < m.threads.size(); ++i)
    if (m.threads[i].rank >= nr) return badRef("thread", i, "rank", m.threads[i].rank);
  for (std::size_t i = 0; i < nc; ++i)
    if (m.api_calls.thread[i] >= nt) return badRef("api call", i, "thread", m.api_calls.thread[i]);
  for (std::size_t i = 0; i < no; ++i) {
    if (m.ops.stream[i] >= ns) return badRef("op", i, "stream", m.ops.stream[i]);
    if (m.ops.launch[i] != kNone && m.ops.launch[i] >= nc) return badRef("op", i, "api call", m.ops.launch[i]);
    if (m.ops.name[i] >= m.strings.size()) return badRef("op", i, "string", m.ops.name[i]);
  }
  for (std::size_t i = 0; i < m.host_syncs.size(); ++i) {
    if (m.host_syncs.rank[i] >= nr) return badRef("host sync", i, "rank", m.host_syncs.rank[i]);
    if (m.host_syncs.api_call[i] != kNone && m.host_syncs.api_call[i] >= nc)
      return badRef("host sync", i, "api call", m.host_syncs.api_call[i]);
    if (m.host_syncs.stream[i] != kNone && m.host_syncs.stream[i] >= ns)
      return badRef("host sync", i, "stream", m.host_syncs.stream[i]);
  }
  for (std::size_t i = 0; i < m.ranges.size(); ++i) {
    if (m.ranges.rank[i] >= nr) return badRef("range", i, "rank", m.ranges.rank[i]);
    if (m.ranges.thread[i] != kNone && m.ranges.thread[i] >= nt) return badRef("range", i, "thread", m.ranges.thread[i]);
  }
  for (std::size_t i = 0; i < collectives_.size(); ++i) {
    const Index op = collectives_[i].op;
    if (op >= no) return badRef("collective", i, "op", op);
    const auto k = m.ops.kind[op];
    if (k != trace::OpKind::Collective && k != trace::OpKind::P2P)
      return trace::failure("collective " + std::to_string(i) + " describes op " + std::to_string(op) +
                            ", which is not a collective or p2p op");
  }
  return {};
}

// The event markers' and collectives' ops, renumbered into the ordered op table (`op_new`:
// newRowsOf the ops' order), each table sorted by op.
void RunModelBuilder::attachOpDetails(const std::vector<Index>& op_new) {
  // Event ids of markers, sorted by op.
  for (auto& [op, event] : op_events_) op = renumbered(op_new, op);
  std::sort(op_events_.begin(), op_events_.end());
  for (const auto& [op, event] : op_events_) {
    model_.event_markers.op.push_back(op);
    model_.event_markers.event_id.push_back(event);
  }
  op_events_.clear();

  // Collective details, sorted by op.
  std::sort(collectives_.begin(), collectives_.end(),
            [&](const PendingCollective& a, const PendingCollective& b) {
              return renumbered(op_new, a.op) < renumbered(op_new, b.op);
            });
  auto& ct = model_.collectives;
  for (const auto& [old_op, row] : collectives_) {
    const Index op = renumbered(op_new, old_op);
    if (!ct.op.empty() && ct.op.back() == op) {
      model_.addDiagnostic(diagnosticRow<trace::diagnostics::model_collective_row_twice>("analyzer", 1));
      continue;
    }
    ct.op.push_back(op);
    ct.comm_id.push_back(row.comm_id);
    ct.comm_rank.push_back(row.comm_rank);
    ct.comm_size.push_back(row.comm_size);
    ct.seq.push_back(row.seq);
    ct.coll_type.push_back(row.coll_type);
    ct.dtype.push_back(row.dtype);
    ct.red_op.push_back(row.red_op);
    ct.count.push_back(row.count);
    ct.bytes.push_back(row.bytes);
    ct.root_or_peer.push_back(row.root_or_peer);
    ct.group_id.push_back(row.group_id);
    ct.match.push_back(kNone);
  }
  collectives_.clear();
}

trace::Result<RunModel> RunModelBuilder::finish(PhaseTimings* timings, const UnmatchedEvents& elsewhere) && {
  PhaseScope phase(timings, "validate references");
  if (trace::Status s = validate(); !s) return s;
  if (timings) timings->start("order tables");
  RunModel& m = model_;

  // Ranks by global rank number (unknown ranks last, in insertion order).
  std::vector<Index> rank_order(m.ranks.size());
  std::iota(rank_order.begin(), rank_order.end(), Index{0});
  std::stable_sort(rank_order.begin(), rank_order.end(), [&](Index a, Index b) {
    auto key = [&](Index i) { return m.ranks[i].rank < 0 ? std::numeric_limits<std::int32_t>::max() : m.ranks[i].rank; };
    return key(a) < key(b);
  });
  const std::vector<Index> rank_new = inverse(rank_order);
  m.ranks = permuted(m.ranks, rank_order);
  for (auto& s : m.streams) s.rank = rank_new[s.rank];
  for (auto& t : m.threads) t.rank = rank_new[t.rank];
  for (auto& r : m.host_syncs.rank) r = rank_new[r];
  for (auto& r : m.ranges.rank) r = rank_new[r];

  // Streams by (rank, device, handle), threads by (rank, tid).
  std::vector<Index> stream_order(m.streams.size());
  std::iota(stream_order.begin(), stream_order.end(), Index{0});
  std::stable_sort(stream_order.begin(), stream_order.end(), [&](Index a, Index b) {
    const auto& x = m.streams[a];
    const auto& y = m.streams[b];
    return std::tie(x.rank, x.device, x.handle) < std::tie(y.rank, y.device, y.handle);
  });
  const std::vector<Index> stream_new = inverse(stream_order);
  m.streams = permuted(m.streams, stream_order);
  for (auto& s : m.ops.stream) s = stream_new[s];
  for (auto& s : m.host_syncs.stream)
    if (s != kNone) s = stream_new[s];

  std::vector<Index> thread_order(m.threads.size());
  std::iota(thread_order.begin(), thread_order.end(), Index{0});
  std::stable_sort(thread_order.begin(), thread_order.end(), [&](Index a, Index b) {
    return std::tie(m.threads[a].rank, m.threads[a].tid) < std::tie(m.threads[b].rank, m.threads[b].tid);
  });
  const std::vector<Index> thread_new = inverse(thread_order);
  m.threads = permuted(m.threads, thread_order);
  for (auto& t : m.api_calls.thread) t = thread_new[t];
  for (auto& t : m.ranges.thread)
    if (t != kNone) t = thread_new[t];

  // API calls by (thread, start), then ops by (stream, start, end). Each order and its inverse
  // take 4 bytes a row: they live only as long as they are needed, and the inverse is not made
  // when the rows are in order already (a run read in order).
  {
    std::vector<Index> call_first;
    std::vector<Index> call_order = bucketOrder(
        m.api_calls.size(), m.threads.size(), [&](Index i) { return m.api_calls.thread[i]; },
        [&](Index a, Index b) { return m.api_calls.start[a] < m.api_calls.start[b]; }, &call_first);
    const std::vector<Index> call_new = newRowsOf(call_order);
    permuteTable(m.api_calls, call_order);
    call_order = {};
    for (std::size_t t = 0; t < m.threads.size(); ++t) {
      m.threads[t].first_call = call_first[t];
      m.threads[t].call_count = call_first[t + 1] - call_first[t];
    }
    for (auto& c : m.ops.launch)
      if (c != kNone) c = renumbered(call_new, c);
    for (auto& c : m.host_syncs.api_call)
      if (c != kNone) c = renumbered(call_new, c);
  }
  {
    std::vector<Index> op_first;
    const std::vector<Index> op_order = bucketOrder(
        m.ops.size(), m.streams.size(), [&](Index i) { return m.ops.stream[i]; },
        [&](Index a, Index b) {
          return std::tie(m.ops.start[a], m.ops.end[a]) < std::tie(m.ops.start[b], m.ops.end[b]);
        },
        &op_first);
    attachOpDetails(newRowsOf(op_order));
    permuteTable(m.ops, op_order);
    for (std::size_t s = 0; s < m.streams.size(); ++s) {
      m.streams[s].first_op = op_first[s];
      m.streams[s].op_count = op_first[s + 1] - op_first[s];
    }
  }

  // Host syncs by (rank, start); ranges by (rank, thread, start, longest first).
  std::vector<Index> sync_first;
  const std::vector<Index> sync_order = bucketOrder(
      m.host_syncs.size(), m.ranks.size(), [&](Index i) { return m.host_syncs.rank[i]; },
      [&](Index a, Index b) { return m.host_syncs.start[a] < m.host_syncs.start[b]; }, &sync_first);
  permuteTable(m.host_syncs, sync_order);
  std::vector<Index> range_first;
  const std::vector<Index> range_order = bucketOrder(
      m.ranges.size(), m.ranks.size(), [&](Index i) { return m.ranges.rank[i]; },
      [&](Index a, Index b) {
        const auto& r = m.ranges;
        return std::make_tuple(r.thread[a], r.start[a], -r.end[a]) < std::make_tuple(r.thread[b], r.start[b], -r.end[b]);
      },
      &range_first);
  permuteTable(m.ranges, range_order);
  computeNesting(m.ranges);

  // Per-rank ranges of rows.
  for (auto& r : m.ranks) r.first_stream = r.stream_count = r.first_thread = r.thread_count = 0;
  for (std::size_t r = 0; r < m.ranks.size(); ++r) {
    auto& info = m.ranks[r];
    info.first_host_sync = sync_first[r];
    info.host_sync_count = sync_first[r + 1] - sync_first[r];
    info.first_range = range_first[r];
    info.range_count = range_first[r + 1] - range_first[r];
  }
  for (std::size_t s = m.streams.size(); s-- > 0;) {
    auto& info = m.ranks[m.streams[s].rank];
    info.first_stream = static_cast<Index>(s);
    ++info.stream_count;
  }
  for (std::size_t t = m.threads.size(); t-- > 0;) {
    auto& info = m.ranks[m.threads[t].rank];
    info.first_thread = static_cast<Index>(t);
    ++info.thread_count;
  }
  for (auto& info : m.ranks) {
    info.first_op = info.stream_count ? m.streams[info.first_stream].first_op : 0;
    info.op_count = 0;
    for (Index s = info.first_stream; s < info.first_stream + info.stream_count; ++s) info.op_count += m.streams[s].op_count;
  }


  // The ops each call launched; flows: event record -> wait, collectives and send -> recv.
  if (timings) timings->start("launch and event flows");
  m.buildLaunchIndex();
  addEventWaitFlows(m, elsewhere);
  if (timings) timings->start("match collectives");
  matchCollectives(m);
  if (timings) timings->start("flow index");
  m.flows.buildIndex();
  return std::move(m);
}

}  // namespace syncopate::analyzer
