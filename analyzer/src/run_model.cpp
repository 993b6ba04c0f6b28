#include "syncopate/analyzer/run_model.hpp"

#include <algorithm>
#include <numeric>

namespace syncopate::analyzer {

void FlowTable::add(NodeRef src, NodeRef dst, FlowKind kind) {
  src_.push_back(src);
  dst_.push_back(dst);
  kind_.push_back(kind);
}

namespace {
// Edge indices ordered by key (stable). Edges are added kind by kind, so the longest sorted
// prefix is often most of them (every event wait, by destination): the rest are ordered by an LSD
// radix sort of (key, index) packed in 64 bits, 11 bits of key a pass over contiguous memory
// (a run's edges number in the millions and a comparison sort would cost seconds), then merged
// with the prefix. On equal keys the merge takes the prefix's edge first, so the order is the
// same as one stable sort of every edge.
std::vector<Index> orderBy(const std::vector<NodeRef>& key) {
  const std::size_t n = key.size();
  auto less = [](NodeRef a, NodeRef b) { return a.raw() < b.raw(); };
  const std::size_t sorted = static_cast<std::size_t>(std::is_sorted_until(key.begin(), key.end(), less) - key.begin());
  std::vector<Index> order(n);
  std::iota(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(sorted), Index{0});
  if (sorted == n) return order;
  const std::size_t tail = n - sorted;
  std::vector<std::uint64_t> packed(tail), next(tail);
  for (std::size_t e = sorted; e < n; ++e) packed[e - sorted] = (std::uint64_t{key[e].raw()} << 32) | e;
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  for (int shift = 32; shift < 64; shift += kBits) {
    std::vector<std::size_t> count(kBuckets + 1, 0);
    for (std::uint64_t v : packed) ++count[((v >> shift) & (kBuckets - 1)) + 1];
    for (std::size_t b = 1; b <= kBuckets; ++b) count[b] += count[b - 1];
    for (std::uint64_t v : packed) next[count[(v >> shift) & (kBuckets - 1)]++] = v;
    packed.swap(next);
  }
  next = {};
  if (sorted == 0) {
    for (std::size_t e = 0; e < n; ++e) order[e] = static_cast<Index>(packed[e] & 0xffffffffu);
    return order;
  }
  // Merge from the back into `order`, whose front holds the prefix: nothing is overwritten
  // before it is read.
  std::size_t a = sorted, b = tail, out = n;
  while (b > 0) {
    const std::uint32_t kb = static_cast<std::uint32_t>(packed[b - 1] >> 32);
    if (a > 0 && key[order[a - 1]].raw() > kb)
      order[--out] = order[--a];
    else
      order[--out] = static_cast<Index>(packed[--b] & 0xffffffffu);
  }
  return order;
}
}  // namespace

void FlowTable::buildIndex() {
  by_src_ = orderBy(src_);
  by_dst_ = orderBy(dst_);
}

namespace {
std::span<const Index> equalRange(const std::vector<Index>& order, const std::vector<NodeRef>& key,
                                  NodeRef node) {
  auto lo = std::lower_bound(order.begin(), order.end(), node.raw(),
                             [&](Index e, std::uint32_t v) { return key[e].raw() < v; });
  auto hi = std::upper_bound(lo, order.end(), node.raw(),
                             [&](std::uint32_t v, Index e) { return v < key[e].raw(); });
  return {order.data() + (lo - order.begin()), static_cast<std::size_t>(hi - lo)};
}
}  // namespace

std::span<const Index> FlowTable::outgoing(NodeRef node) const { return equalRange(by_src_, src_, node); }
std::span<const Index> FlowTable::incoming(NodeRef node) const { return equalRange(by_dst_, dst_, node); }

std::size_t FlowTable::bytes() const {
  return src_.capacity() * sizeof(NodeRef) * 2 + kind_.capacity() + by_src_.capacity() * sizeof(Index) * 2;
}

Index RunModel::collectiveOf(Index op) const {
  const trace::OpKind kind = ops.kind[op];
  if (kind != trace::OpKind::Collective && kind != trace::OpKind::P2P) return kNone;
  const auto it = std::lower_bound(collectives.op.begin(), collectives.op.end(), op);
  return it != collectives.op.end() && *it == op ? static_cast<Index>(it - collectives.op.begin()) : kNone;
}

std::span<const Index> RunModel::opsLaunchedBy(Index call) const {
  const auto lo = std::partition_point(launched_ops.begin(), launched_ops.end(),
                                       [&](Index op) { return ops.launch[op] < call; });
  const auto hi = std::partition_point(lo, launched_ops.end(), [&](Index op) { return ops.launch[op] == call; });
  return {launched_ops.data() + (lo - launched_ops.begin()), static_cast<std::size_t>(hi - lo)};
}

void RunModel::buildLaunchIndex() {
  // A counting sort by call: stable, so each call's ops stay in op order.
  std::vector<Index> first(api_calls.size() + 1, 0);
  for (const Index call : ops.launch)
    if (call != kNone) ++first[call + 1];
  std::partial_sum(first.begin(), first.end(), first.begin());
  launched_ops.assign(first[api_calls.size()], 0);
  for (std::size_t op = 0; op < ops.size(); ++op)
    if (ops.launch[op] != kNone) launched_ops[first[ops.launch[op]]++] = static_cast<Index>(op);
}

std::int64_t RunModel::eventOf(Index op) const {
  auto it = std::lower_bound(event_markers.op.begin(), event_markers.op.end(), op);
  if (it == event_markers.op.end() || *it != op) return kUnknown;
  return event_markers.event_id[static_cast<std::size_t>(it - event_markers.op.begin())];
}

Index RunModel::rangeOpenAt(Index thread, std::int64_t t) const {
  const RankInfo& r = ranks[threads[thread].rank];
  // A rank's ranges are sorted by (thread, start): the first of this thread's, then the first
  // that started after t.
  auto partition = [](Index a, Index b, auto&& before) {
    while (a < b) {
      const Index mid = a + (b - a) / 2;
      before(mid) ? a = mid + 1 : b = mid;
    }
    return a;
  };
  const Index first = partition(r.first_range, r.first_range + r.range_count, [&](Index i) { return ranges.thread[i] < thread; });
  const Index last = partition(first, r.first_range + r.range_count,
                               [&](Index i) { return ranges.thread[i] == thread && ranges.start[i] <= t; });
  // The last range of the thread that started by t, then up its parents to one still open.
  Index open = last > first ? last - 1 : kNone;
  while (open != kNone && ranges.end[open] <= t) open = ranges.parent[open];
  return open;
}

namespace {
template <class Table>
void widen(const Table& t, std::int64_t& lo, std::int64_t& hi) {
  if (t.start.empty()) return;
  lo = std::min(lo, *std::min_element(t.start.begin(), t.start.end()));
  hi = std::max(hi, *std::max_element(t.end.begin(), t.end.end()));
}
std::pair<std::int64_t, std::int64_t> extent(const RunModel& m) {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = std::numeric_limits<std::int64_t>::min();
  widen(m.ops, lo, hi);
  widen(m.api_calls, lo, hi);
  widen(m.host_syncs, lo, hi);
  widen(m.ranges, lo, hi);
  if (lo > hi) return {0, 0};
  return {lo, hi};
}
template <class V>
std::size_t vecBytes(const V& v) {
  return v.capacity() * sizeof(typename V::value_type);
}
}  // namespace

std::int64_t RunModel::beginNs() const { return extent(*this).first; }
std::int64_t RunModel::endNs() const { return extent(*this).second; }

std::size_t RunModel::bytes() const {
  std::size_t b = strings.bytes() + flows.bytes() + vecBytes(launched_ops);
  b += vecBytes(ops.start) + vecBytes(ops.end) + vecBytes(ops.name) + vecBytes(ops.stream) +
       vecBytes(ops.kind) + vecBytes(ops.op_class) + vecBytes(ops.bytes) + vecBytes(ops.launch) +
       vecBytes(ops.store_id);
  b += vecBytes(api_calls.start) + vecBytes(api_calls.end) + vecBytes(api_calls.thread) +
       vecBytes(api_calls.name) + vecBytes(api_calls.domain) + vecBytes(api_calls.store_id);
  b += host_syncs.size() * 48 + ranges.size() * 40 + event_markers.size() * 12;
  b += collectives.size() * 72 + matches.size() * 40 + matches.participants.size() * 4;
  b += streams.size() * sizeof(StreamInfo) + threads.size() * sizeof(ThreadInfo);
  return b;
}

void RunModel::addDiagnostic(trace::DiagnosticRow diagnostic) { diagnostics.push_back(std::move(diagnostic)); }

OpClass classify(trace::OpKind kind, std::string_view name) {
  switch (kind) {
    case trace::OpKind::Collective:
    case trace::OpKind::P2P: return OpClass::Communication;
    case trace::OpKind::Memcpy:
    case trace::OpKind::Memset: return OpClass::Memory;
    case trace::OpKind::EventRecord:
    case trace::OpKind::StreamWait:
    case trace::OpKind::HostSync: return OpClass::Marker;
    case trace::OpKind::Kernel:
      // NCCL's kernels recorded as plain kernels still communicate (HTA: "ncclKernel" in name;
      // NCCL 2.19+ names them ncclDevKernel_*).
      return name.starts_with("nccl") || name.find("ncclKernel") != std::string_view::npos ||
                     name.find("ncclDevKernel") != std::string_view::npos
                 ? OpClass::Communication
                 : OpClass::Compute;
  }
  return OpClass::Compute;
}

std::string_view toString(OpClass c) {
  switch (c) {
    case OpClass::Compute: return "compute";
    case OpClass::Communication: return "communication";
    case OpClass::Memory: return "memory";
    case OpClass::Marker: return "marker";
  }
  return "?";
}

std::string_view toString(FlowKind k) {
  switch (k) {
    case FlowKind::EventWait: return "event_wait";
    case FlowKind::Collective: return "collective";
    case FlowKind::SendRecv: return "send_recv";
  }
  return "?";
}

}  // namespace syncopate::analyzer
