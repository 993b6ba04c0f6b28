#include "store_rows.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "sqlite_handles.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/trace/store_tables.hpp"

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
  SqliteStmt stmt(raw);
  const trace::PrefixRead read = trace::stepUntilTorn(raw, row);
  if (read.torn) {
    torn.push_back({std::string(trace::tableName(table)), read.rows});
    return {};
  }
  if (read.rc != SQLITE_DONE) return trace::failure(file.string() + " cannot be read: " + sqlite3_errmsg(db));
  return {};
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
  SqliteDb db(raw);
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

}  // namespace

std::string tearDescription(const trace::StoreTear& tear) {
  return tear.header_bytes > 0 ? fmt::format("the file has {} of the {} bytes its header says", tear.file_bytes, tear.header_bytes)
                               : std::string("a page is damaged or missing");
}

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

StoreFacts storeFacts(const trace::StoreReader& r) {
  StoreFacts f;
  f.path = r.path().string();
  f.rank = r.rank();
  f.pid = r.pid();
  if (auto v = r.metaValue("host")) f.host = std::string(*v);
  if (auto v = r.metaValue("source")) f.source = std::string(*v);
  f.realtime_offset_ns = r.realtimeOffsetNs();
  f.world_size = metaInt(r, "world_size");
  f.trace_start_ns = metaInt(r, kTraceStartMetaKey);
  f.trace_end_ns = metaInt(r, kTraceEndMetaKey);
  f.start_ns = metaInt(r, "start_ns");
  f.end_ns = metaInt(r, "end_ns");
  f.strings.resize(std::size_t{r.maxStringId()} + 1);
  for (std::uint32_t id = 0; id <= r.maxStringId(); ++id) f.strings[id] = std::string(r.string(id));
  f.tear = r.tear();
  return f;
}

}  // namespace syncopate::analyzer
