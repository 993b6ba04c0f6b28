#include "syncopate/analyzer/run_loader.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "diagnostic_row.hpp"
#include "syncopate/analyzer/run_model_builder.hpp"
#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/run_dir.hpp"
#include "syncopate/trace/torn_scan.hpp"

namespace syncopate::analyzer {

namespace {

std::optional<std::int64_t> metaInt(const trace::StoreReader& r, std::string_view key) {
  const auto v = r.metaValue(key);
  if (!v) return std::nullopt;
  std::int64_t out = 0;
  const auto [end, err] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (err != std::errc{} || end != v->data() + v->size()) return std::nullopt;
  return out;
}

// Reports progress at most every 1% of the rows.
class Progress {
 public:
  Progress(const ProgressFn& fn, std::size_t total) : fn_(fn), total_(std::max<std::size_t>(total, 1)) {}
  void add(std::string_view what, std::size_t rows = 1) {
    done_ += rows;
    if (fn_ && (done_ >= next_ || done_ == total_)) {
      fn_(what, std::min(done_, total_), total_);
      next_ = done_ + total_ / 100 + 1;
    }
  }

 private:
  const ProgressFn& fn_;
  std::size_t total_, done_ = 0, next_ = 0;
};

// The big tables, with only the columns the model keeps. StoreReader's scans decode every
// column into optionals; reading these columns of ops, api_calls and nvtx_ranges directly is a
// third cheaper, and these tables are most of a run. The columns are named by the tables'
// declaration (trace::columns), which minor versions only extend; StoreReader::open() has
// already checked that the file is a store of a major version this build reads.
// NULLs arrive as sentinels (SQL IFNULL: one call per column instead of two).
struct OpLite {
  std::int64_t id, start, end, correlation, bytes, event;  // kUnknown for NULL
  trace::StreamId stream;                                    // 0 for NULL
  trace::StringId name;
  trace::OpKind kind;
  std::uint8_t sync_kind;                                    // 255 for NULL
};
struct CallLite {
  std::int64_t id, start, end, correlation;  // correlation: kUnknown for NULL
  trace::ThreadId thread;
  trace::StringId name;
  trace::ApiDomain domain;
};
struct RangeLite {
  std::int64_t id, start, end;
  trace::ThreadId thread;   // kNoThread for NULL
  trace::StringId domain;   // kNoString for NULL
  trace::StringId name;
  std::int64_t depth;       // -1 for NULL
};

// An op's place in time, and its position in its stream.
struct OpKey {
  std::int64_t start, end;
  std::size_t at;
};

// Everything a store holds that the model needs, read by a worker thread (SQLite is most of
// the loading time, and stores are independent) and then translated into the builder in order.
struct StoreRows {
  std::vector<trace::StreamRow> streams;
  std::vector<trace::ThreadRow> threads;
  std::vector<CallLite> calls;
  std::vector<OpLite> ops;
  std::vector<OpLite> ops_by_stream;  // sortLikeTheModel's second buffer, swapped with ops
  std::vector<OpKey> op_keys;         // sortLikeTheModel's keys of a stream out of time order
  std::vector<trace::CollectiveRow> collectives;
  std::vector<RangeLite> ranges;
  std::vector<trace::DiagnosticRow> diagnostics;
  std::int64_t implausible_rows = 0;  // streams and threads dropped by dropImplausibleIds
  std::vector<trace::TornTable> torn;  // of the tables read here: those read only up to a tear
};

// The writer numbers streams and threads 1, 2, 3, ... and the loader indexes tables by those
// ids, so an id far beyond the row count can only come from a damaged store, and would size a
// table of gigabytes: such rows are dropped (counted), and what refers to them is skipped as
// referring to rows the store lacks.
template <class Row>
std::int64_t dropImplausibleIds(std::vector<Row>& table) {
  const std::uint64_t limit = 16 * static_cast<std::uint64_t>(table.size()) + 4096;
  return static_cast<std::int64_t>(std::erase_if(table, [&](const Row& row) { return row.id >= limit; }));
}

template <class Row>
auto collector(std::vector<Row>& out) {
  return [&out](const Row& row) { out.push_back(row); };
}

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};

// The table's rows up to its tear, if it has one (trace::selectUpToTear); each expression a
// column of trace::columns, or ifNull() of one.
std::string selectSql(trace::Table table, std::initializer_list<std::string_view> expressions) {
  std::string columns;
  for (std::string_view e : expressions) columns += (columns.empty() ? "" : ", ") + std::string(e);
  return trace::selectUpToTear(columns, trace::tableName(table));
}
std::string ifNull(std::string_view column, std::int64_t value) {
  return "IFNULL(" + std::string(column) + ", " + std::to_string(value) + ")";
}

// Runs `sql` (selectSql()) on the store and calls row(stmt) per row up to the table's tear,
// noting the table in `torn` if it has one; another failure names the store.
template <class Row>
trace::Status scanColumns(sqlite3* db, const std::filesystem::path& file, trace::Table table, const std::string& sql, Row row,
                          std::vector<trace::TornTable>& torn) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK)
    return trace::failure(file.string() + " cannot be read: " + sqlite3_errmsg(db));
  std::unique_ptr<sqlite3_stmt, StmtFinalizer> stmt(raw);
  const trace::PrefixRead read = trace::stepUntilTorn(raw, row);
  if (read.torn) {
    torn.push_back({std::string(trace::tableName(table)), read.rows});
    return {};
  }
  if (read.rc != SQLITE_DONE) return trace::failure(file.string() + " cannot be read: " + sqlite3_errmsg(db));
  return {};
}

// How a store is torn, for the sentences about it.
std::string tearDescription(const trace::StoreTear& tear) {
  return tear.header_bytes > 0 ? fmt::format("the file has {} of the {} bytes its header says", tear.file_bytes, tear.header_bytes)
                               : std::string("a page is damaged or missing");
}

// Puts a store's rows in the model's order (streams by device and handle, threads by tid, ops
// by stream then start, calls by thread then start), here on the worker that read them: the
// builder then finds every table already sorted and has nothing to reorder.
void sortLikeTheModel(StoreRows& rows) {
  std::stable_sort(rows.streams.begin(), rows.streams.end(), [](const trace::StreamRow& a, const trace::StreamRow& b) {
    return std::make_pair(a.device_id, a.handle.value_or(a.id)) < std::make_pair(b.device_id, b.handle.value_or(b.id));
  });
  std::stable_sort(rows.threads.begin(), rows.threads.end(),
                   [](const trace::ThreadRow& a, const trace::ThreadRow& b) { return a.tid < b.tid; });
  auto positions = [](const auto& table) {
    std::vector<std::uint32_t> at;
    for (std::uint32_t i = 0; i < table.size(); ++i) {
      if (table[i].id >= at.size()) at.resize(table[i].id + 1, UINT32_MAX);
      at[table[i].id] = i;
    }
    return at;
  };
  const std::vector<std::uint32_t> stream_at = positions(rows.streams), thread_at = positions(rows.threads);
  auto pos = [](const std::vector<std::uint32_t>& at, std::uint32_t id) { return id < at.size() ? at[id] : UINT32_MAX; };
  // Ops: a store's ops arrive in time order across its few streams, so a stable counting sort
  // by stream (ops of unknown streams last) leaves each stream's ops in time order, and only a
  // stream that is not gets a comparison sort: the same order as one stable sort by
  // (stream, start, end), in one pass.
  const std::size_t buckets = rows.streams.size() + 1;
  std::vector<std::size_t> first(buckets + 1, 0);
  auto bucketOf = [&](const OpLite& o) { return std::min<std::size_t>(pos(stream_at, o.stream), buckets - 1); };
  for (const OpLite& o : rows.ops) ++first[bucketOf(o) + 1];
  for (std::size_t b = 1; b <= buckets; ++b) first[b] += first[b - 1];
  if (first[1] != rows.ops.size()) {  // more than one stream: regroup
    rows.ops_by_stream.resize(rows.ops.size());
    std::vector<std::size_t> fill(first.begin(), first.end() - 1);
    for (const OpLite& o : rows.ops) rows.ops_by_stream[fill[bucketOf(o)]++] = o;
    rows.ops.swap(rows.ops_by_stream);
  }
  // A stream out of time order stable-sorts its (start, end, position) keys, a third of an op's
  // size, and then moves each op once (merge sort: these streams are in order but for a few ops,
  // where introsort falls back to heapsort).
  auto byTime = [](const OpLite& a, const OpLite& b) { return std::tie(a.start, a.end) < std::tie(b.start, b.end); };
  for (std::size_t b = 0; b < buckets; ++b) {
    const auto lo = rows.ops.begin() + static_cast<std::ptrdiff_t>(first[b]);
    const auto hi = rows.ops.begin() + static_cast<std::ptrdiff_t>(first[b + 1]);
    if (std::is_sorted(lo, hi, byTime)) continue;
    rows.op_keys.clear();
    for (auto o = lo; o != hi; ++o) rows.op_keys.push_back({o->start, o->end, static_cast<std::size_t>(o - lo)});
    std::stable_sort(rows.op_keys.begin(), rows.op_keys.end(),
                     [](const OpKey& x, const OpKey& y) { return std::tie(x.start, x.end) < std::tie(y.start, y.end); });
    rows.ops_by_stream.resize(rows.op_keys.size());
    for (std::size_t k = 0; k < rows.op_keys.size(); ++k) rows.ops_by_stream[k] = lo[static_cast<std::ptrdiff_t>(rows.op_keys[k].at)];
    std::copy(rows.ops_by_stream.begin(), rows.ops_by_stream.end(), lo);
  }
  auto callKey = [&](const CallLite& c) { return std::make_pair(pos(thread_at, c.thread), c.start); };
  if (!std::is_sorted(rows.calls.begin(), rows.calls.end(), [&](const CallLite& a, const CallLite& b) { return callKey(a) < callKey(b); }))
    std::stable_sort(rows.calls.begin(), rows.calls.end(),
                     [&](const CallLite& a, const CallLite& b) { return callKey(a) < callKey(b); });
}

trace::Status readPackedTables(const trace::StoreReader& r, StoreRows& rows);
trace::Status readRowTables(const trace::StoreReader& r, StoreRows& rows);

// Fills `rows` (emptied first; its buffers are reused from store to store, since faulting in
// fresh memory for every store costs more than reading some of them).
// `calls` and `ops` are the store's row counts (counted once, when the run was opened).
trace::Status readStore(const trace::StoreReader& r, std::size_t calls, std::size_t ops, StoreRows& rows) {
  rows.streams.clear(), rows.threads.clear(), rows.calls.clear(), rows.ops.clear();
  rows.collectives.clear(), rows.ranges.clear(), rows.diagnostics.clear(), rows.torn.clear();
  rows.calls.reserve(calls);
  rows.ops.reserve(ops);
  for (trace::Status s : {r.forEachStream(collector(rows.streams)), r.forEachThread(collector(rows.threads)),
                          r.forEachCollective(collector(rows.collectives)), r.forEachDiagnostic(collector(rows.diagnostics))})
    if (!s.ok()) return trace::failure(s.message());
  rows.implausible_rows = dropImplausibleIds(rows.streams) + dropImplausibleIds(rows.threads);
  const trace::Status read = r.schemaVersion().major >= 2 ? readPackedTables(r, rows) : readRowTables(r, rows);
  if (!read) return read;
  // GPU ops are what an analysis measures: a store torn before its first one is refused, which
  // says more than an analysis of nothing.
  if (std::any_of(rows.torn.begin(), rows.torn.end(),
                  [](const trace::TornTable& t) { return t.table == trace::tableName(trace::Table::Ops) && t.rows_kept == 0; }))
    return trace::failure(r.path().string() + " is torn before its first GPU op (" + tearDescription(r.tear()) +
                          "): its ops table cannot be read, so nothing of it can be analysed");
  sortLikeTheModel(rows);
  return {};
}

// Schema 2: the reader decodes the pages of api_calls, ops and nvtx_ranges (no SQL per row to
// save); the tables it found torn are noted like those of readRowTables.
trace::Status readPackedTables(const trace::StoreReader& r, StoreRows& rows) {
  trace::Status s = r.forEachApiCall([&](const trace::ApiCallRow& c) {
    rows.calls.push_back({c.id, c.start_ns, c.end_ns, c.correlation_id.value_or(kUnknown), c.thread_id, c.name_id, c.domain});
  });
  if (s) {
    s = r.forEachOp([&](const trace::OpRow& o) {
      rows.ops.push_back({o.id, o.start_ns, o.end_ns, o.correlation_id.value_or(kUnknown), o.bytes.value_or(kUnknown),
                          o.event_id ? std::int64_t{*o.event_id} : kUnknown, o.stream_id.value_or(trace::kNoStream), o.name_id,
                          o.kind, o.sync_kind ? static_cast<std::uint8_t>(*o.sync_kind) : std::uint8_t{255}});
    });
  }
  if (s) {
    s = r.forEachNvtxRange([&](const trace::NvtxRangeRow& n) {
      rows.ranges.push_back({n.id, n.start_ns, n.end_ns, n.thread_id.value_or(trace::kNoThread),
                             n.domain_id.value_or(trace::kNoString), n.name_id,
                             n.depth ? std::int64_t{*n.depth} : std::int64_t{-1}});
    });
  }
  if (!s) return trace::failure(s.message());
  rows.torn = r.tear().tables;
  return {};
}

// Schema 1: every row a SQLite row, read by column-subset SELECTs.
trace::Status readRowTables(const trace::StoreReader& r, StoreRows& rows) {
  sqlite3* raw = nullptr;
  const int rc = trace::openUpToTear(r.path().string(), SQLITE_OPEN_NOMUTEX, &raw);
  std::unique_ptr<sqlite3, DbCloser> db(raw);
  if (rc != SQLITE_OK) return trace::failure("cannot open " + r.path().string() + ": " + sqlite3_errstr(rc));
  // Pages read through a memory map are used in place instead of copied out by read() calls
  // (a tenth of the scan's time); a store larger than the map reads the rest the usual way.
  sqlite3_exec(db.get(), "PRAGMA mmap_size=1073741824", nullptr, nullptr, nullptr);
  namespace call = trace::columns::api_calls;
  namespace op = trace::columns::ops;
  namespace range = trace::columns::nvtx_ranges;
  const std::string calls_sql =
      selectSql(trace::Table::ApiCalls, {call::id, call::thread_id, call::domain, call::name_id, call::start_ns,
                                         call::end_ns, ifNull(call::correlation_id, -1)});
  trace::Status s = scanColumns(db.get(), r.path(), trace::Table::ApiCalls, calls_sql,
                                [&](sqlite3_stmt* q) {
                                  rows.calls.push_back({sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 4),
                                                        sqlite3_column_int64(q, 5), sqlite3_column_int64(q, 6),
                                                        static_cast<trace::ThreadId>(sqlite3_column_int64(q, 1)),
                                                        static_cast<trace::StringId>(sqlite3_column_int64(q, 3)),
                                                        static_cast<trace::ApiDomain>(sqlite3_column_int(q, 2))});
                                },
                                rows.torn);
  if (!s) return s;
  const std::string ops_sql =
      selectSql(trace::Table::Ops, {op::id, op::kind, ifNull(op::stream_id, 0), op::name_id, op::start_ns, op::end_ns,
                                    ifNull(op::correlation_id, -1), ifNull(op::bytes, -1), ifNull(op::event_id, -1),
                                    ifNull(op::sync_kind, 255)});
  s = scanColumns(db.get(), r.path(), trace::Table::Ops, ops_sql,
                  [&](sqlite3_stmt* q) {
                    rows.ops.push_back({sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 4), sqlite3_column_int64(q, 5),
                                        sqlite3_column_int64(q, 6), sqlite3_column_int64(q, 7), sqlite3_column_int64(q, 8),
                                        static_cast<trace::StreamId>(sqlite3_column_int64(q, 2)),
                                        static_cast<trace::StringId>(sqlite3_column_int64(q, 3)),
                                        static_cast<trace::OpKind>(sqlite3_column_int(q, 1)),
                                        static_cast<std::uint8_t>(sqlite3_column_int(q, 9))});
                  },
                  rows.torn);
  if (!s) return s;
  const std::string ranges_sql =
      selectSql(trace::Table::NvtxRanges, {range::id, ifNull(range::thread_id, 0), ifNull(range::domain_id, 0), range::name_id,
                                           range::start_ns, range::end_ns, ifNull(range::depth, -1)});
  s = scanColumns(db.get(), r.path(), trace::Table::NvtxRanges, ranges_sql,
                  [&](sqlite3_stmt* q) {
                    rows.ranges.push_back({sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 4), sqlite3_column_int64(q, 5),
                                           static_cast<trace::ThreadId>(sqlite3_column_int64(q, 1)),
                                           static_cast<trace::StringId>(sqlite3_column_int64(q, 2)),
                                           static_cast<trace::StringId>(sqlite3_column_int64(q, 3)), sqlite3_column_int64(q, 6)});
                  },
                  rows.torn);
  return s;
}

// One store's rows into the builder. Store-local ids (strings, streams, threads, correlation)
// are translated here; rows that refer to ids the store does not have are counted, not kept.
class StoreLoader {
 public:
  StoreLoader(const trace::StoreReader& reader, const StoreRows& rows, RunModelBuilder& builder, Progress& progress)
      : r_(reader), rows_(rows), b_(builder), progress_(progress), name_(reader.path().filename().string()) {}

  void load() {
    addRank();
    loadStreamsAndThreads();
    loadApiCalls();
    loadOps();
    loadCollectives();
    loadRanges();
    loadDiagnostics();
    reportSkipped();
    reportTear();
  }

 private:
  // A string id beyond the store's strings table (a damaged row) reads as the empty name,
  // counted; the table below is thus never larger than the store's own.
  StringId str(trace::StringId id) {
    if (id == trace::kNoString) return 0;
    if (id > r_.maxStringId()) {
      ++unknown_strings_;
      return 0;
    }
    if (id >= strings_.size()) strings_.resize(std::max<std::size_t>(id + 1, strings_.size() * 2), kUnset);
    if (strings_[id] == kUnset) strings_[id] = b_.intern(r_.string(id));
    return strings_[id];
  }

  void addRank() {
    RankInfo info;
    info.rank = r_.rank().value_or(-1);
    info.pid = r_.pid().value_or(-1);
    info.host = std::string(r_.metaValue("host").value_or(""));
    info.source = std::string(r_.metaValue("source").value_or("record"));
    info.store_path = r_.path().string();
    info.realtime_offset_ns = r_.realtimeOffsetNs();
    info.world_size = static_cast<std::int32_t>(metaInt(r_, "world_size").value_or(-1));
    const auto start = metaInt(r_, kTraceStartMetaKey) ? metaInt(r_, kTraceStartMetaKey) : metaInt(r_, "start_ns");
    const auto end = metaInt(r_, kTraceEndMetaKey) ? metaInt(r_, kTraceEndMetaKey) : metaInt(r_, "end_ns");
    if (start && end && *end >= *start) info.recording_start_ns = *start, info.recording_end_ns = *end;
    // A writer sets end_ns when it closes its store; without it the process never got there.
    if (!metaInt(r_, "end_ns")) {
      const std::string whose = info.rank >= 0 ? fmt::format("rank {}", info.rank) : fmt::format("process {}", info.pid);
      b_.addDiagnostic(diagnosticRow<trace::diagnostics::load_store_not_closed>(name_, 1, whose));
    }
    rank_ = b_.addRank(std::move(info));
  }

  void loadStreamsAndThreads() {
    for (const trace::StreamRow& row : rows_.streams) {
      const std::int64_t handle = static_cast<std::int64_t>(row.handle.value_or(row.id));
      const std::string label = row.name.empty() ? "stream " + std::to_string(handle) : row.name;
      if (row.id >= streams_.size()) streams_.resize(row.id + 1, kNone);
      streams_[row.id] = b_.addStream(rank_, row.device_id, handle, label, row.priority.value_or(0), row.id);
    }
    for (const trace::ThreadRow& row : rows_.threads) {
      if (row.id >= threads_.size()) threads_.resize(row.id + 1, kNone);
      threads_[row.id] = b_.addThread(rank_, row.tid, row.name, row.id);
    }
  }

  void loadApiCalls() {
    calls_by_correlation_.reserve(rows_.calls.size());
    for (const CallLite& row : rows_.calls) {
      const Index thread = row.thread < threads_.size() ? threads_[row.thread] : kNone;
      if (thread == kNone) {
        ++skipped_calls_;
        continue;
      }
      const Index call = b_.addApiCall({.thread = thread, .domain = row.domain, .name = str(row.name),
                                        .start = row.start, .end = row.end, .store_id = row.id});
      if (row.correlation != kUnknown) calls_by_correlation_.push_back({row.correlation, call});
    }
    progress_.add(name_, rows_.calls.size());
    // Correlation ids count the process's calls, so they are usually dense: then a table
    // indexed by id replaces a binary search per op, and is filled without sorting (calls come
    // in index order, so the first call seen for an id is its lowest, as after a sort).
    if (calls_by_correlation_.empty()) return;
    const auto [lo_it, hi_it] = std::minmax_element(calls_by_correlation_.begin(), calls_by_correlation_.end(),
                                                    [](const auto& a, const auto& b) { return a.first < b.first; });
    const std::int64_t lo = lo_it->first, hi = hi_it->first;
    if (hi - lo < 4 * static_cast<std::int64_t>(calls_by_correlation_.size()) + 1024) {
      first_correlation_ = lo;
      call_at_.assign(static_cast<std::size_t>(hi - lo + 1), kNone);
      for (const auto& [corr, call] : calls_by_correlation_)
        if (call_at_[static_cast<std::size_t>(corr - lo)] == kNone) call_at_[static_cast<std::size_t>(corr - lo)] = call;
      calls_by_correlation_ = {};
    } else if (!std::is_sorted(calls_by_correlation_.begin(), calls_by_correlation_.end())) {
      std::sort(calls_by_correlation_.begin(), calls_by_correlation_.end());
    }
  }

  Index callOf(std::int64_t correlation) const {
    if (correlation == kUnknown) return kNone;
    if (!call_at_.empty()) {
      const std::int64_t at = correlation - first_correlation_;
      return at >= 0 && at < static_cast<std::int64_t>(call_at_.size()) ? call_at_[static_cast<std::size_t>(at)] : kNone;
    }
    auto it = std::lower_bound(calls_by_correlation_.begin(), calls_by_correlation_.end(),
                               std::make_pair(correlation, Index{0}));
    return it != calls_by_correlation_.end() && it->first == correlation ? it->second : kNone;
  }

  Index streamOf(trace::StreamId id) const {
    if (id == trace::kNoStream || id >= streams_.size()) return kNone;
    return streams_[id];
  }

  void loadOps() {
    for (const OpLite& row : rows_.ops) {
      const Index call = callOf(row.correlation);
      if (row.kind == trace::OpKind::HostSync) {
        b_.addHostSync({.rank = rank_, .api_call = call,
                        .sync_kind = row.sync_kind == 255 ? trace::SyncKind::Unknown : static_cast<trace::SyncKind>(row.sync_kind),
                        .stream = streamOf(row.stream), .event_id = row.event, .start = row.start, .end = row.end,
                        .store_id = row.id});
        continue;
      }
      const Index stream = streamOf(row.stream);
      if (stream == kNone) {
        ++skipped_ops_;
        continue;
      }
      const Index op = b_.addOp({.stream = stream, .kind = row.kind, .name = str(row.name), .start = row.start,
                                 .end = row.end, .api_call = call, .bytes = row.bytes, .event_id = row.event,
                                 .store_id = row.id});
      if ((row.kind == trace::OpKind::Collective || row.kind == trace::OpKind::P2P) && row.correlation != kUnknown)
        collective_ops_.push_back({row.correlation, op});
    }
    progress_.add(name_, rows_.ops.size());
    std::sort(collective_ops_.begin(), collective_ops_.end());
  }

  void loadCollectives() {
    for (const trace::CollectiveRow& row : rows_.collectives) {
      // Several collectives of one call (a group) share its correlation id: each describes the
      // next op of that call not yet described.
      auto it = std::lower_bound(collective_ops_.begin(), collective_ops_.end(), std::make_pair(row.correlation_id, Index{0}));
      while (it != collective_ops_.end() && it->first == row.correlation_id && it->second == kNone) ++it;
      if (it == collective_ops_.end() || it->first != row.correlation_id) {
        ++unjoined_collectives_;
        continue;
      }
      b_.addCollective(it->second, {.comm_id = std::bit_cast<std::int64_t>(row.comm_id),
                                    .comm_rank = row.comm_rank.value_or(-1),
                                    .comm_size = row.comm_size.value_or(-1),
                                    .seq = static_cast<std::int64_t>(row.seq),
                                    .coll_type = row.coll_type,
                                    .dtype = row.dtype.value_or(trace::DataType::Unknown),
                                    .red_op = row.red_op.value_or(trace::RedOp::Unknown),
                                    .count = row.count ? static_cast<std::int64_t>(*row.count) : kUnknown,
                                    .bytes = row.bytes ? static_cast<std::int64_t>(*row.bytes) : kUnknown,
                                    .root_or_peer = row.root_or_peer.value_or(-1),
                                    .group_id = row.group_id ? static_cast<std::int64_t>(*row.group_id) : kUnknown});
      it->second = kNone;
    }
  }

  void loadRanges() {
    for (const RangeLite& row : rows_.ranges) {
      const Index thread = row.thread != trace::kNoThread && row.thread < threads_.size() ? threads_[row.thread] : kNone;
      b_.addRange({.rank = rank_, .thread = thread, .domain = str(row.domain), .name = str(row.name), .start = row.start,
                   .end = row.end,
                   .depth = row.depth < 0 ? std::int16_t{-1} : static_cast<std::int16_t>(std::min<std::int64_t>(row.depth, 32767)),
                   .store_id = row.id});
    }
  }

  void loadDiagnostics() {
    for (trace::DiagnosticRow row : rows_.diagnostics) {
      row.source = name_ + ": " + row.source;
      b_.addDiagnostic(std::move(row));
    }
  }

  void reportSkipped() {
    if (skipped_calls_ > 0) b_.addDiagnostic(diagnosticRow<trace::diagnostics::load_calls_without_thread>(name_, skipped_calls_));
    if (skipped_ops_ > 0) b_.addDiagnostic(diagnosticRow<trace::diagnostics::load_ops_without_stream>(name_, skipped_ops_));
    if (unjoined_collectives_ > 0)
      b_.addDiagnostic(diagnosticRow<trace::diagnostics::load_collectives_unjoined>(name_, unjoined_collectives_));
    if (rows_.implausible_rows + unknown_strings_ > 0)
      b_.addDiagnostic(diagnosticRow<trace::diagnostics::load_rows_damaged>(name_, rows_.implausible_rows + unknown_strings_));
  }

  // One diagnostic per table read only up to a tear, whichever connection met it.
  void reportTear() {
    const trace::StoreTear& tear = r_.tear();
    std::vector<trace::TornTable> tables = rows_.torn;
    for (const trace::TornTable& t : tear.tables)
      if (std::none_of(tables.begin(), tables.end(), [&](const trace::TornTable& k) { return k.table == t.table; }))
        tables.push_back(t);
    for (const trace::TornTable& t : tables)
      b_.addDiagnostic(diagnosticRow<trace::diagnostics::load_store_torn>(name_, 1, tearDescription(tear), t.table, t.rows_kept));
  }

  static constexpr StringId kUnset = ~StringId{0};
  const trace::StoreReader& r_;
  const StoreRows& rows_;
  RunModelBuilder& b_;
  Progress& progress_;
  std::string name_;
  Index rank_ = 0;
  std::vector<StringId> strings_;
  std::vector<Index> streams_, threads_;
  std::vector<std::pair<std::int64_t, Index>> calls_by_correlation_, collective_ops_;
  std::vector<Index> call_at_;  // dense correlation id -> call, when ids are dense
  std::int64_t first_correlation_ = 0;
  std::int64_t skipped_calls_ = 0, skipped_ops_ = 0, unjoined_collectives_ = 0, unknown_strings_ = 0;
};

}  // namespace

trace::Result<RunModel> loadRun(const std::filesystem::path& dir, const LoadOptions& options) {
  PhaseScope phase(options.timings, "open stores");
  auto stores = trace::listStores(dir);
  if (!stores.ok()) return trace::failure(stores.message());
  if (stores->empty())
    return trace::failure(dir.string() + " holds no run store (rank-<R>.sqlite or pid-<P>.sqlite): record a run with "
                                         "'syncopate record -o DIR -- COMMAND' or import one with 'syncopate import'");
  std::vector<trace::StoreReader> readers;
  std::vector<std::size_t> call_rows, op_rows;
  std::size_t total_rows = 0;
  for (const trace::StoreFile& f : *stores) {
    auto reader = trace::StoreReader::open(f.path, trace::TornStores::KeepRowsBefore);
    if (!reader.ok()) return trace::failure(reader.message());
    for (trace::Table t : {trace::Table::Ops, trace::Table::ApiCalls}) {
      auto n = reader->rowCount(t);
      if (!n.ok()) return trace::failure(n.message());
      (t == trace::Table::Ops ? op_rows : call_rows).push_back(static_cast<std::size_t>(*n));
      total_rows += static_cast<std::size_t>(*n);
    }
    readers.push_back(std::move(reader).value());
  }
  if (options.timings) options.timings->start("read stores into rows");
  RunModelBuilder builder;
  builder.reserveOps(total_rows / 2);
  builder.reserveApiCalls(total_rows / 2);
  Progress progress(options.progress, total_rows);
  // Workers read stores ahead (at most a few at a time, to bound memory); this thread turns
  // them into model rows in store order, so the model does not depend on timing.
  const std::size_t n = readers.size();
  const std::size_t workers = std::min<std::size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  struct Slot {
    std::unique_ptr<StoreRows> rows;
    trace::Status status;
  };
  std::vector<std::optional<Slot>> slots(n);
  std::vector<std::unique_ptr<StoreRows>> spare;  // buffers of stores already consumed
  std::mutex mu;
  std::condition_variable cv;
  std::size_t next = 0, consumed = 0;
  bool stop = false;
  auto work = [&] {
    for (;;) {
      std::size_t i;
      std::unique_ptr<StoreRows> rows;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stop || next >= n || next < consumed + workers + 1; });
        if (stop || next >= n) return;
        i = next++;
        if (!spare.empty()) rows = std::move(spare.back()), spare.pop_back();
      }
      if (!rows) rows = std::make_unique<StoreRows>();
      trace::Status status = readStore(readers[i], call_rows[i], op_rows[i], *rows);
      std::lock_guard lock(mu);
      slots[i].emplace(Slot{std::move(rows), std::move(status)});
      cv.notify_all();
    }
  };
  std::vector<std::jthread> pool;
  for (std::size_t w = 0; w < workers; ++w) pool.emplace_back(work);
  auto stopWorkers = [&] {
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    cv.notify_all();
    pool.clear();  // joins
  };
  for (std::size_t i = 0; i < n; ++i) {
    Slot slot;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return slots[i].has_value(); });
      slot = std::move(*slots[i]);
      slots[i].reset();
    }
    if (!slot.status) {
      stopWorkers();
      return slot.status;
    }
    StoreLoader(readers[i], *slot.rows, builder, progress).load();
    {
      std::lock_guard lock(mu);
      spare.push_back(std::move(slot.rows));
      ++consumed;
    }
    cv.notify_all();
  }
  stopWorkers();
  auto model = std::move(builder).finish(options.timings);
  if (!model) return model.status();
  if (options.timings) options.timings->start("align clocks");
  alignClocks(*model, options.clock);
  return model;
}

}  // namespace syncopate::analyzer
