// DIR/analysis.json and DIR/analysis.sqlite: the results the GUI and the tuner read
// (docs/analyzer.md, "Results in the run directory"). Both are written to a temporary name and
// renamed into place, so a reader never sees half a file.
#include <sqlite3.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <thread>

#include "sqlite_handles.hpp"
#include "syncopate/analyzer/report.hpp"
#include "syncopate/trace/json_text.hpp"

namespace syncopate::analyzer {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ranks(rank_row INTEGER PRIMARY KEY, rank INTEGER NOT NULL, host TEXT, store TEXT,
                   to_aligned_ns INTEGER NOT NULL);
CREATE TABLE iterations(rank_row INTEGER NOT NULL, iteration INTEGER NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, host_start_ns INTEGER, host_end_ns INTEGER,
  ops INTEGER NOT NULL, compute_ns INTEGER NOT NULL, communication_ns INTEGER NOT NULL,
  memory_ns INTEGER NOT NULL, overlapped_communication_ns INTEGER NOT NULL,
  exposed_communication_ns INTEGER NOT NULL, busy_ns INTEGER NOT NULL, idle_ns INTEGER NOT NULL,
  collective_wait_ns INTEGER NOT NULL, exposed_all_reduce_ns INTEGER NOT NULL,
  exposed_reduce_scatter_ns INTEGER NOT NULL, exposed_all_gather_ns INTEGER NOT NULL,
  exposed_other_collective_ns INTEGER NOT NULL);
CREATE TABLE stream_idle(rank_row INTEGER NOT NULL, stream_handle INTEGER NOT NULL, device INTEGER NOT NULL,
  ops INTEGER NOT NULL, busy_ns INTEGER NOT NULL, host_wait_ns INTEGER NOT NULL,
  kernel_wait_ns INTEGER NOT NULL, other_ns INTEGER NOT NULL);
CREATE TABLE critical_path(iteration INTEGER NOT NULL, position INTEGER NOT NULL, rank_row INTEGER NOT NULL,
  node_kind TEXT NOT NULL, store_id INTEGER, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  category TEXT NOT NULL, straggler_rank_row INTEGER, segments INTEGER NOT NULL);
CREATE TABLE collectives(match_id INTEGER NOT NULL, comm_id INTEGER NOT NULL, seq INTEGER NOT NULL,
  coll_type TEXT NOT NULL, ranks INTEGER NOT NULL, expected INTEGER, complete INTEGER NOT NULL,
  first_arrival_ns INTEGER NOT NULL, last_arrival_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  arrival_skew_ns INTEGER NOT NULL, straggler_rank_row INTEGER, lateness_ns INTEGER NOT NULL,
  wait_ns INTEGER NOT NULL, time_ns INTEGER NOT NULL, bytes INTEGER, algbw_gbps REAL, busbw_gbps REAL);
CREATE TABLE collective_participants(match_id INTEGER NOT NULL, rank_row INTEGER NOT NULL,
  store_id INTEGER, arrival_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, wait_ns INTEGER NOT NULL);
)sql";

constexpr const char* kIndexes = R"sql(
CREATE INDEX iterations_by_iteration ON iterations(iteration, rank_row);
CREATE INDEX critical_path_by_iteration ON critical_path(iteration, position);
CREATE INDEX collectives_by_match ON collectives(match_id);
CREATE INDEX participants_by_match ON collective_participants(match_id);
)sql";

using Db = SqliteDb;
using Stmt = SqliteStmt;

class Writer {
 public:
  explicit Writer(const std::string& file) : file_(file) {}

  trace::Status open() {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(file_.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    db_.reset(raw);
    if (rc != SQLITE_OK) return fail("cannot create");
    if (trace::Status s = exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"); !s) return s;
    if (trace::Status s = exec(kSchema); !s) return s;
    return exec("BEGIN");
  }
  // Indexes are built once the rows are in: cheaper than keeping them up to date row by row.
  trace::Status commit() {
    if (trace::Status s = exec(kIndexes); !s) return s;
    return exec("COMMIT");
  }

  trace::Result<Stmt> prepare(const char* sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_.get(), sql, -1, &s, nullptr) != SQLITE_OK) return fail("cannot prepare a statement in");
    return Stmt(s);
  }

  // Binds each value in order and steps once.
  template <class... Values>
  trace::Status insert(sqlite3_stmt* s, const Values&... values) {
    int i = 0;
    (bind(s, ++i, values), ...);
    const int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? trace::Status{} : fail("cannot write");
  }

 private:
  static void bind(sqlite3_stmt* s, int i, std::int64_t v) { sqlite3_bind_int64(s, i, v); }
  static void bind(sqlite3_stmt* s, int i, int v) { sqlite3_bind_int64(s, i, v); }
  static void bind(sqlite3_stmt* s, int i, Index v) { sqlite3_bind_int64(s, i, v); }
  static void bind(sqlite3_stmt* s, int i, std::size_t v) { sqlite3_bind_int64(s, i, static_cast<std::int64_t>(v)); }
  static void bind(sqlite3_stmt* s, int i, double v) { sqlite3_bind_double(s, i, v); }
  static void bind(sqlite3_stmt* s, int i, std::nullptr_t) { sqlite3_bind_null(s, i); }
  static void bind(sqlite3_stmt* s, int i, const std::string& v) {
    sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  static void bind(sqlite3_stmt* s, int i, std::string_view v) {
    sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }

  trace::Status exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_.get(), sql, nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      return trace::failure("cannot write " + file_ + ": " + msg);
    }
    return {};
  }
  trace::Status fail(const char* what) const {
    return trace::failure(std::string(what) + " " + file_ + ": " + (db_ ? sqlite3_errmsg(db_.get()) : "out of memory"));
  }

  std::string file_;
  Db db_;
};

std::string_view nodeKind(NodeRef n) {
  switch (n.kind()) {
    case NodeRef::Kind::Op: return "op";
    case NodeRef::Kind::ApiCall: return "api_call";
    case NodeRef::Kind::HostSync: return "host_sync";
  }
  return "?";
}

#define SYNCOPATE_TRY(expr)          \
  do {                               \
    if (trace::Status s_ = (expr); !s_) return s_; \
  } while (0)

trace::Status writeTables(Writer& w, const RunModel& m, const Analysis& a) {
  {
    auto s = w.prepare("INSERT INTO meta VALUES(?,?)");
    if (!s) return s.status();
    SYNCOPATE_TRY(w.insert(s->get(), std::string("schema_version"), std::string(kAnalysisStoreVersion)));
    SYNCOPATE_TRY(w.insert(s->get(), std::string("iterations_source"), std::string(toString(a.iterations.source))));
    SYNCOPATE_TRY(w.insert(s->get(), std::string("iteration_marker"), a.iterations.marker));
    SYNCOPATE_TRY(w.insert(s->get(), std::string("time_axis"), std::string("aligned ns: raw store time + ranks.to_aligned_ns")));
  }
  {
    auto s = w.prepare("INSERT INTO ranks VALUES(?,?,?,?,?)");
    if (!s) return s.status();
    for (Index r = 0; r < m.ranks.size(); ++r)
      SYNCOPATE_TRY(w.insert(s->get(), r, m.ranks[r].rank, m.ranks[r].host, m.ranks[r].store_path, m.ranks[r].to_aligned_ns));
  }
  {
    auto s = w.prepare("INSERT INTO iterations VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!s) return s.status();
    for (const RankIterationMetrics& r : a.rank_iterations) {
      const TimeBreakdown& t = r.time;
      SYNCOPATE_TRY(w.insert(s->get(), r.rank, r.window.number, r.window.start, r.window.end, r.window.host_start,
                             r.window.host_end, r.window.op_count, t.compute_ns, t.communication_ns, t.memory_ns,
                             t.overlapped_communication_ns, t.exposed_communication_ns, t.busy_ns, t.idle_ns,
                             r.collective_wait_ns, t.exposed_by_collective_ns[0], t.exposed_by_collective_ns[1],
                             t.exposed_by_collective_ns[2], t.exposed_by_collective_ns[3]));
    }
  }
  {
    auto s = w.prepare("INSERT INTO stream_idle VALUES(?,?,?,?,?,?,?,?)");
    if (!s) return s.status();
    for (const RankSummary& rs : a.ranks)
      for (const StreamIdle& st : rs.streams)
        SYNCOPATE_TRY(w.insert(s->get(), rs.rank, m.streams[st.stream].handle, m.streams[st.stream].device, st.ops, st.busy_ns,
                               st.host_wait_ns, st.kernel_wait_ns, st.other_ns));
  }
  {
    auto s = w.prepare("INSERT INTO critical_path VALUES(?,?,?,?,?,?,?,?,?,?)");
    if (!s) return s.status();
    for (const CriticalPath& p : a.critical_paths) {
      std::int64_t position = 0;
      for (std::size_t i = 0; i < p.segments.size();) {
        // A host-bound stretch is one host segment per API call and per gap between calls;
        // stored, consecutive host time on one thread is one row (the last call, and a count).
        const PathSegment& seg = p.segments[i];
        std::size_t j = i + 1;
        PathNodeFacts last_facts = p.nodeFacts(m, i);
        if (seg.category == PathCategory::Host && seg.node.kind() == NodeRef::Kind::ApiCall) {
          const Index thread = last_facts.thread;
          for (; j < p.segments.size() && p.segments[j].category == PathCategory::Host &&
                 p.segments[j].node.kind() == NodeRef::Kind::ApiCall && p.segments[j].rank == seg.rank;
               ++j) {
            PathNodeFacts next = p.nodeFacts(m, j);
            if (next.thread != thread) break;
            last_facts = std::move(next);
          }
        }
        const PathSegment& last = p.segments[j - 1];
        const std::int64_t store_id = last_facts.store_id;
        const auto merged = static_cast<std::int64_t>(j - i);
        if (seg.straggler == kNone)
          SYNCOPATE_TRY(w.insert(s->get(), p.iteration, position++, seg.rank, nodeKind(last.node), store_id, seg.start, last.end,
                                 toString(seg.category), nullptr, merged));
        else
          SYNCOPATE_TRY(w.insert(s->get(), p.iteration, position++, seg.rank, nodeKind(last.node), store_id, seg.start, last.end,
                                 toString(seg.category), seg.straggler, merged));
        i = j;
      }
    }
  }
  {
    auto calls = w.prepare("INSERT INTO collectives VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    auto parts = w.prepare("INSERT INTO collective_participants VALUES(?,?,?,?,?,?)");
    if (!calls) return calls.status();
    if (!parts) return parts.status();
    for (const CollectiveTiming& t : a.collectives.calls) {
      const Index k = t.match;
      const std::int64_t straggler = t.straggler == kNone ? -1 : static_cast<std::int64_t>(t.straggler);
      SYNCOPATE_TRY(w.insert(calls->get(), k, m.matches.comm_id[k], m.matches.seq[k], trace::toString(m.matches.coll_type[k]),
                             t.ranks, m.matches.expected[k], t.complete ? 1 : 0, t.first_arrival, t.last_arrival, t.end,
                             t.arrival_skew_ns, straggler, t.lateness_ns, t.wait_ns, t.time_ns, t.bytes, t.algbw_gbps,
                             t.busbw_gbps));
      for (Index row : m.matches.of(k)) {
        const Index op = m.collectives.op[row];
        SYNCOPATE_TRY(w.insert(parts->get(), k, m.rankOfOp(op), m.ops.store_id[op], m.ops.start[op], m.ops.end[op],
                               t.last_arrival - m.ops.start[op]));
      }
    }
  }
  return {};
}

trace::Status replace(const std::filesystem::path& tmp, const std::filesystem::path& target) {
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) return trace::failure("cannot move " + tmp.string() + " to " + target.string() + ": " + ec.message());
  return {};
}

trace::Status writeJson(const std::filesystem::path& dir, const nlohmann::json& document) {
  const std::filesystem::path json_tmp = dir / (std::string(kAnalysisJsonFile) + ".tmp");
  {
    std::ofstream out(json_tmp);
    out << trace::jsonText(document, 1) << '\n';
    if (!out) return trace::failure("cannot write " + json_tmp.string() + " (is the run directory writable?)");
  }
  return replace(json_tmp, dir / kAnalysisJsonFile);
}

trace::Status writeStore(const std::filesystem::path& dir, const RunModel& m, const Analysis& a) {
  const std::filesystem::path db_tmp = dir / (std::string(kAnalysisStoreFile) + ".tmp");
  std::error_code ec;
  std::filesystem::remove(db_tmp, ec);
  {
    Writer w(db_tmp.string());
    if (trace::Status s = w.open(); !s) return s;
    if (trace::Status s = writeTables(w, m, a); !s) return s;
    if (trace::Status s = w.commit(); !s) return s;
  }
  return replace(db_tmp, dir / kAnalysisStoreFile);
}

}  // namespace

trace::Status writeAnalysisResults(const std::filesystem::path& dir, const RunModel& m, const Analysis& a,
                                   const nlohmann::json& document) {
  // The JSON file is written on another core while the store is: they share nothing.
  trace::Status json_status;
  std::exception_ptr json_exception;  // rethrown here, as if the file had been written on this thread
  std::thread json_writer([&] {
    try {
      json_status = writeJson(dir, document);
    } catch (...) {
      json_exception = std::current_exception();
    }
  });
  trace::Status store_status;
  try {
    store_status = writeStore(dir, m, a);
  } catch (...) {
    json_writer.join();
    throw;
  }
  json_writer.join();
  if (json_exception) std::rethrow_exception(json_exception);
  if (!json_status) return json_status;
  return store_status;
}

}  // namespace syncopate::analyzer
