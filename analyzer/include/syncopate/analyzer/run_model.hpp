// The in-memory model of a whole run (all ranks), the one thing every analysis reads.
//
// Columns, not objects: each table is a set of parallel vectors indexed by a 32-bit row number,
// names are interned (StringTable), and relations between rows are plain indices. An op with
// its launching call costs about 75 bytes (docs/analyzer.md, "Memory").
//
// Order is part of the contract, so that ranges replace searches:
//   ranks     by global rank number;
//   streams   by (rank, device, handle); threads by (rank, tid);
//   ops       by (stream, start): the ops of one stream, and of one rank, are contiguous;
//   api_calls by (thread, start); host_syncs by (rank, start); ranges by (rank, thread, start).
//
// Flows between GPU ops (event record -> stream wait, the ranks of one collective, send -> recv)
// live in one edge table, `flows`, navigable both ways; launches (API call -> GPU op) are
// ops.launch one way and opsLaunchedBy the other.
//
// Timestamps are int64 nanoseconds on the run's common time axis (realtime, after clock
// alignment); RankInfo::to_aligned_ns says what was added to that rank's raw store timestamps,
// so raw = aligned - to_aligned_ns.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "syncopate/analyzer/clock_report.hpp"
#include "syncopate/analyzer/string_table.hpp"
#include "syncopate/trace/rows.hpp"
#include "syncopate/trace/types.hpp"

namespace syncopate::analyzer {

using Index = std::uint32_t;
inline constexpr Index kNone = std::numeric_limits<Index>::max();
inline constexpr std::int64_t kUnknown = -1;  // for sizes and ids that were not recorded

using trace::OpClass;  // what an op does to the GPU (syncopate/trace/types.hpp)

struct RankInfo {
  std::int32_t rank = -1;       // global rank; -1 when the store never learnt it
  std::int32_t world_size = -1;
  std::int64_t pid = -1;
  std::string host;
  std::string store_path;       // where it was loaded from (empty for built models)
  std::string source;           // 'record' | 'import-kineto' | 'import-nsys' | 'synthetic'
  std::int64_t realtime_offset_ns = 0;  // the store's CLOCK_REALTIME - CLOCK_MONOTONIC
  std::int64_t to_aligned_ns = 0;       // added to raw timestamps by clock alignment
  std::int64_t recording_start_ns = 0, recording_end_ns = 0;  // aligned; 0,0 when unknown
  // Contiguous ranges of this rank's rows in the tables.
  Index first_stream = 0, stream_count = 0;
  Index first_thread = 0, thread_count = 0;
  Index first_op = 0, op_count = 0;
  Index first_host_sync = 0, host_sync_count = 0;
  Index first_range = 0, range_count = 0;
};

struct StreamInfo {
  Index rank = 0;               // row in RunModel::ranks
  std::int32_t device = 0;
  std::int64_t handle = 0;      // cudaStream_t value or the importer's stream number
  std::int32_t priority = 0;
  bool non_blocking = false;    // created with cudaStreamNonBlocking: no implicit sync with the legacy stream
  StringId name = 0;
  std::int64_t store_id = kUnknown;
  Index first_op = 0, op_count = 0;
};

struct ThreadInfo {
  Index rank = 0;
  std::int64_t tid = 0;
  StringId name = 0;
  std::int64_t store_id = kUnknown;
  Index first_call = 0, call_count = 0;
};

// Row ids in a rank's store (ops.id, api_calls.id: where a row's details live), in 32 bits: at
// 8 bytes they were the widest columns of the two largest tables. A store's ids run from 1 to its
// row count, far below kMax for any run whose rows fit the model's 32-bit Index (the builder
// refuses one that is not); kUnknown reads back as kUnknown.
class StoreIdColumn {
 public:
  using value_type = std::uint32_t;
  static constexpr std::int64_t kMax = std::int64_t{std::numeric_limits<std::uint32_t>::max()} - 1;
  static constexpr bool fits(std::int64_t id) { return id == kUnknown || (id >= 0 && id <= kMax); }

  std::int64_t operator[](std::size_t row) const {
    return ids_[row] == 0 ? kUnknown : std::int64_t{ids_[row]} - 1;
  }
  // `id` must fit (RunModelBuilder checks).
  void push_back(std::int64_t id) { ids_.push_back(id < 0 ? 0 : static_cast<std::uint32_t>(id + 1)); }
  void reserve(std::size_t n) { ids_.reserve(n); }
  std::size_t size() const { return ids_.size(); }
  std::size_t capacity() const { return ids_.capacity(); }
  // As stored (the id + 1, 0 for kUnknown): for reordering the rows.
  std::vector<std::uint32_t>& encoded() { return ids_; }

 private:
  std::vector<std::uint32_t> ids_;
};

// Everything that ran on a stream: kernels, memcpys, memsets, collectives, p2p, and the
// zero-length event record/wait markers.
struct OpTable {
  std::vector<std::int64_t> start, end;
  std::vector<StringId> name;
  std::vector<Index> stream;
  std::vector<trace::OpKind> kind;
  std::vector<OpClass> op_class;
  std::vector<std::int64_t> bytes;       // kUnknown when not recorded
  std::vector<Index> launch;             // the API call that launched it, or kNone
  StoreIdColumn store_id;                // ops.id in the rank's store (details live there)
  std::size_t size() const { return start.size(); }
};

// Host API calls (runtime, driver, NCCL).
struct ApiCallTable {
  std::vector<std::int64_t> start, end;
  std::vector<Index> thread;
  std::vector<StringId> name;
  std::vector<trace::ApiDomain> domain;
  StoreIdColumn store_id;
  std::size_t size() const { return start.size(); }
};

// Host-blocking synchronisations (cudaStreamSynchronize & co): the window the host was blocked.
struct HostSyncTable {
  std::vector<std::int64_t> start, end;
  std::vector<Index> rank;
  std::vector<Index> api_call;           // the call that blocked, or kNone
  std::vector<trace::SyncKind> sync_kind;
  std::vector<Index> stream;             // the stream waited on (Stream/Event syncs), or kNone
  std::vector<std::int64_t> event_id;    // the cudaEvent_t waited on, or kUnknown
  std::vector<std::int64_t> store_id;
  std::size_t size() const { return start.size(); }
};

// NVTX ranges (and PyTorch record_function ranges from imports); marks have end == start.
struct RangeTable {
  std::vector<std::int64_t> start, end;
  std::vector<Index> rank;
  std::vector<Index> thread;             // kNone when not known
  std::vector<StringId> domain;          // 0 for the default domain
  std::vector<StringId> name;
  std::vector<std::int16_t> depth;       // nesting depth on its thread, 0 = outermost
  std::vector<Index> parent;             // the range it is nested in, or kNone
  std::vector<std::int64_t> store_id;
  std::size_t size() const { return start.size(); }
};

// The cudaEvent_t of event record / stream wait markers, sorted by op.
struct EventMarkerTable {
  std::vector<Index> op;
  std::vector<std::int64_t> event_id;
  std::size_t size() const { return op.size(); }
};

// One row per Collective/P2P op, sorted by op.
struct CollectiveTable {
  std::vector<Index> op;
  std::vector<std::int64_t> comm_id;     // identical on every rank of the communicator
  std::vector<std::int32_t> comm_rank, comm_size;  // -1 when unknown
  std::vector<std::int64_t> seq;         // per-communicator sequence number
  std::vector<trace::CollType> coll_type;
  std::vector<trace::DataType> dtype;
  std::vector<trace::RedOp> red_op;
  std::vector<std::int64_t> count, bytes;  // kUnknown when not recorded
  std::vector<std::int32_t> root_or_peer;  // comm rank of the root / peer, -1 when none
  std::vector<std::int64_t> group_id;
  std::vector<Index> match;              // row in CollectiveMatchTable, or kNone
  std::size_t size() const { return op.size(); }
};

// The ranks of one collective call (same communicator and sequence number), or one send and
// its receive. Participants are collective rows, sorted by comm rank.
struct CollectiveMatchTable {
  std::vector<std::int64_t> comm_id;
  std::vector<std::int64_t> seq;         // for p2p: the k-th send from this sender to this receiver
  std::vector<trace::CollType> coll_type;
  std::vector<std::int32_t> expected;    // ranks that should take part (comm_size; 2 for p2p)
  std::vector<Index> first, count;       // range in `participants`
  std::vector<Index> participants;
  std::size_t size() const { return comm_id.size(); }
  std::span<const Index> of(Index match) const {
    return {participants.data() + first[match], count[match]};
  }
  bool complete(Index match) const {
    return expected[match] > 0 && static_cast<std::int32_t>(count[match]) == expected[match];
  }
};

// A row of any table that can be a node of the run's graph: an op, an API call or a host sync.
class NodeRef {
 public:
  enum class Kind : std::uint8_t { Op = 0, ApiCall = 1, HostSync = 2 };
  constexpr NodeRef() = default;
  constexpr NodeRef(Kind kind, Index index) : v_((static_cast<std::uint32_t>(kind) << 30) | index) {}
  static constexpr NodeRef op(Index i) { return {Kind::Op, i}; }
  static constexpr NodeRef apiCall(Index i) { return {Kind::ApiCall, i}; }
  static constexpr NodeRef hostSync(Index i) { return {Kind::HostSync, i}; }
  constexpr Kind kind() const { return static_cast<Kind>(v_ >> 30); }
  constexpr Index index() const { return v_ & kIndexMask; }
  constexpr std::uint32_t raw() const { return v_; }
  friend constexpr bool operator==(NodeRef a, NodeRef b) { return a.v_ == b.v_; }

  static constexpr Index kIndexMask = (1u << 30) - 1;

 private:
  std::uint32_t v_ = 0;
};

// Edges between GPU ops. A launch (API call -> the ops it enqueued) is not one: ops.launch holds
// it, and RunModel::opsLaunchedBy reads it the other way, at 4 bytes an op where an edge and its
// two index entries took 17 (a run's launches number as many as its ops).
enum class FlowKind : std::uint8_t {
  EventWait = 1,   // event record op -> the stream wait op that waited for it
  Collective = 2,  // first participant (lowest comm rank) -> each other participant
  SendRecv = 3,    // send op -> the matching receive op
};

// The edge table. Edges are stored once; two index permutations give them by source and by
// destination, so a node's outgoing and incoming flows are each one binary search away.
class FlowTable {
 public:
  void add(NodeRef src, NodeRef dst, FlowKind kind);
  void buildIndex();  // call after the last add()
  std::size_t size() const { return src_.size(); }
  NodeRef src(Index edge) const { return src_[edge]; }
  NodeRef dst(Index edge) const { return dst_[edge]; }
  FlowKind kind(Index edge) const { return kind_[edge]; }
  // Edge indices leaving / entering a node.
  std::span<const Index> outgoing(NodeRef node) const;
  std::span<const Index> incoming(NodeRef node) const;
  std::size_t bytes() const;

 private:
  std::vector<NodeRef> src_, dst_;
  std::vector<FlowKind> kind_;
  std::vector<Index> by_src_, by_dst_;
};

// Stream waits and host syncs on an event of which no record was issued before them (it came
// before the recording): they draw no flow, and the diagnostics count them.
struct UnmatchedEvents {
  std::int64_t waits = 0, syncs = 0;
};

struct RunModel {
  StringTable strings;
  std::vector<RankInfo> ranks;
  std::vector<StreamInfo> streams;
  std::vector<ThreadInfo> threads;
  OpTable ops;
  ApiCallTable api_calls;
  HostSyncTable host_syncs;
  RangeTable ranges;
  EventMarkerTable event_markers;
  CollectiveTable collectives;
  CollectiveMatchTable matches;
  FlowTable flows;
  // Everything the stores said and loading or analysing added: the sentences of the one list
  // (syncopate/trace/diagnostics.inc). `source` names who said it ('rank-3.sqlite: trace.writer',
  // 'analyzer', ...); `id` is the row's in its store, 0 for the analyzer's own.
  std::vector<trace::DiagnosticRow> diagnostics;
  ClockAlignment clock;  // how the ranks' timestamps were put on one axis (alignClocks)
  UnmatchedEvents unmatched_events;  // of these rows, and of any counted elsewhere (finish())

  std::string_view str(StringId id) const { return strings[id]; }
  Index rankOfOp(Index op) const { return streams[ops.stream[op]].rank; }
  Index rankOfCall(Index call) const { return threads[api_calls.thread[call]].rank; }
  // The API call that launched an op, or kNone.
  Index launchOf(Index op) const { return ops.launch[op]; }
  // An op's row in `collectives` (a collective or p2p op the store described), or kNone: a
  // binary search of collectives.op, where a column of every op took 4 bytes an op for the few
  // that communicate.
  Index collectiveOf(Index op) const;
  // The ops an API call launched, in op order (empty for a call that launched none).
  std::span<const Index> opsLaunchedBy(Index call) const;
  // Every op that has a launching call, ordered by (ops.launch, op): opsLaunchedBy's index,
  // built with the model (buildLaunchIndex).
  std::vector<Index> launched_ops;
  void buildLaunchIndex();
  // The event id of an event record / stream wait op, or kUnknown.
  std::int64_t eventOf(Index op) const;
  // The innermost range open on host thread `thread` at time `t`, or kNone.
  Index rangeOpenAt(Index thread, std::int64_t t) const;
  // The earliest and latest aligned timestamps of any row (for display and windows).
  std::int64_t beginNs() const;
  std::int64_t endNs() const;
  // Approximate memory held by the model, in bytes.
  std::size_t bytes() const;
  void addDiagnostic(trace::DiagnosticRow diagnostic);
};

// The class of an op of `kind` named `name` (see OpClass).
OpClass classify(trace::OpKind kind, std::string_view name);
std::string_view toString(OpClass c);
std::string_view toString(FlowKind k);

}  // namespace syncopate::analyzer
