#include "syncopate/analyzer/results_reader.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "sqlite_handles.hpp"
#include "syncopate/analyzer/clock_alignment.hpp"
#include "syncopate/analyzer/report.hpp"
#include "syncopate/trace/run_dir.hpp"

namespace syncopate::analyzer {

namespace {

class ResultsFile {
 public:
  explicit ResultsFile(std::filesystem::path file) : file_(std::move(file)) {}

  trace::Status open() {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(file_.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
    db_.reset(raw);
    if (rc != SQLITE_OK) return fail("cannot open");
    return {};
  }

  // Runs `sql` and calls row(stmt) for each row; a failure names the file and what SQLite said.
  template <class RowFn>
  trace::Status each(const char* sql, RowFn&& row) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_.get(), sql, -1, &raw, nullptr) != SQLITE_OK) return fail("cannot read");
    SqliteStmt stmt(raw);
    int rc;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
      if (trace::Status s = row(raw); !s) return s;
    }
    return rc == SQLITE_DONE ? trace::Status{} : fail("cannot read");
  }

  trace::Status stale(const std::string& what) const {
    return trace::failure(fmt::format("{} is not of the run as it is now ({}); run 'syncopate analyze {}' again", file_.string(),
                                      what, file_.parent_path().string()));
  }
  trace::Status damaged(const std::string& what) const {
    return trace::failure(fmt::format("{} is damaged ({}); run 'syncopate analyze {}' again", file_.string(), what,
                                      file_.parent_path().string()));
  }

 private:
  trace::Status fail(const char* what) const {
    return trace::failure(fmt::format("{} {} ({}); run 'syncopate analyze {}' again", what, file_.string(),
                                      db_ ? sqlite3_errmsg(db_.get()) : "out of memory", file_.parent_path().string()));
  }

  std::filesystem::path file_;
  SqliteDb db_;
};

std::int64_t integer(sqlite3_stmt* s, int column) { return sqlite3_column_int64(s, column); }

std::string text(sqlite3_stmt* s, int column) {
  const auto* p = sqlite3_column_text(s, column);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(s, column))) : "";
}

bool parseSource(std::string_view name, IterationSource& out) {
  for (IterationSource s : {IterationSource::Markers, IterationSource::Pattern, IterationSource::WholeRun}) {
    if (toString(s) == name) {
      out = s;
      return true;
    }
  }
  return false;
}

// The results are of this directory's stores when they name the same store files.
trace::Status sameStores(const std::filesystem::path& dir, const std::vector<StoredRank>& ranks, const ResultsFile& file) {
  auto stores = trace::listStores(dir);
  if (!stores.ok()) return trace::failure(stores.message());
  std::set<std::string> now, analysed;
  for (const trace::StoreFile& f : *stores) now.insert(f.path.filename().string());
  for (const StoredRank& r : ranks) analysed.insert(r.store.filename().string());
  if (now != analysed)
    return file.stale(fmt::format("it holds the results of {} stores, and the directory now holds {} stores{}",
                                    analysed.size(), now.size(), now.size() == analysed.size() ? " of other names" : ""));
  // A store written after the results (the run recorded again into the directory) is not theirs.
  std::error_code ec;
  const auto results_time = std::filesystem::last_write_time(dir / kAnalysisStoreFile, ec);
  if (ec) return {};
  for (const trace::StoreFile& f : *stores) {
    const auto store_time = std::filesystem::last_write_time(f.path, ec);
    if (!ec && store_time > results_time)
      return file.stale(fmt::format("{} was written after it, so the run changed since it was analysed",
                                      f.path.filename().string()));
  }
  return {};
}

}  // namespace

trace::Result<StoredResults> readStoredResults(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / kAnalysisStoreFile;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return trace::failure(fmt::format("{} has no {}: run 'syncopate analyze {}' first", dir.string(), kAnalysisStoreFile,
                                      dir.string()));
  ResultsFile file(path);
  if (trace::Status s = file.open(); !s) return s;

  std::string version, source = "whole_run", marker;
  trace::Status s = file.each("SELECT key, value FROM meta", [&](sqlite3_stmt* row) {
    const std::string key = text(row, 0);
    if (key == "schema_version") version = text(row, 1);
    else if (key == "iterations_source") source = text(row, 1);
    else if (key == "iteration_marker") marker = text(row, 1);
    return trace::Status{};
  });
  if (!s) return s;
  // Minor versions only add columns; this build reads major version 1.
  if (version.substr(0, version.find('.')) != "1")
    return file.damaged(fmt::format("its schema version is '{}', and this build reads 1.x", version));

  StoredResults out;
  if (!parseSource(source, out.analysis.iterations.source))
    return file.damaged(fmt::format("iterations_source '{}' is none of markers, pattern, whole_run", source));
  out.analysis.iterations.marker = marker;

  s = file.each("SELECT rank_row, rank, host, store, to_aligned_ns FROM ranks ORDER BY rank_row", [&](sqlite3_stmt* row) {
    if (integer(row, 0) != static_cast<std::int64_t>(out.ranks.size()))
      return file.damaged(fmt::format("rank rows are not numbered 0 to N-1: row {} follows {}", integer(row, 0), out.ranks.size()));
    // Offsets a clock could have (a century of nanoseconds): anything beyond is damage, and
    // would overflow the times it is added to.
    constexpr std::int64_t kLargestOffsetNs = std::int64_t{1} << 62;
    if (std::llabs(integer(row, 4)) > kLargestOffsetNs)
      return file.damaged(fmt::format("rank row {} has a clock offset of {} ns", out.ranks.size(), integer(row, 4)));
    out.ranks.push_back({static_cast<std::int32_t>(integer(row, 1)), text(row, 2), text(row, 3), integer(row, 4)});
    return trace::Status{};
  });
  if (!s) return s;
  if (out.ranks.empty()) return file.damaged("it has no ranks");
  if (s = sameStores(dir, out.ranks, file); !s) return s;

  s = file.each("SELECT comm_id, seq, coll_type, ranks, IFNULL(expected, 0), complete, first_arrival_ns, last_arrival_ns, "
                "end_ns FROM collectives ORDER BY match_id",
                [&](sqlite3_stmt* row) {
                  StoredCollective c;
                  c.comm_id = integer(row, 0);
                  c.seq = integer(row, 1);
                  c.coll_type = text(row, 2);
                  c.ranks = static_cast<std::int32_t>(integer(row, 3));
                  c.expected = static_cast<std::int32_t>(integer(row, 4));
                  c.complete = integer(row, 5) != 0;
                  c.first_arrival_ns = integer(row, 6);
                  c.last_arrival_ns = integer(row, 7);
                  c.end_ns = integer(row, 8);
                  out.collectives.push_back(std::move(c));
                  return trace::Status{};
                });
  if (!s) return s;

  Analysis& a = out.analysis;
  a.iterations.per_rank.resize(out.ranks.size());
  a.ranks.resize(out.ranks.size());
  for (std::size_t r = 0; r < a.ranks.size(); ++r) a.ranks[r].rank = static_cast<Index>(r);
  s = file.each(
      "SELECT rank_row, iteration, start_ns, end_ns, host_start_ns, host_end_ns, ops, compute_ns, communication_ns, "
      "memory_ns, overlapped_communication_ns, exposed_communication_ns, busy_ns, idle_ns, collective_wait_ns, "
      "exposed_all_reduce_ns, exposed_reduce_scatter_ns, exposed_all_gather_ns, exposed_other_collective_ns "
      "FROM iterations ORDER BY iteration, rank_row",
      [&](sqlite3_stmt* row) {
        const std::int64_t rank = integer(row, 0);
        if (rank < 0 || rank >= static_cast<std::int64_t>(out.ranks.size()))
          return file.damaged(fmt::format("an iteration row names rank row {}, of {} ranks", rank, out.ranks.size()));
        RankIterationMetrics m;
        m.rank = static_cast<Index>(rank);
        m.window = {integer(row, 1), integer(row, 2), integer(row, 3), integer(row, 4), integer(row, 5),
                    static_cast<Index>(integer(row, 6))};
        TimeBreakdown& t = m.time;
        if (m.window.end < m.window.start || __builtin_sub_overflow(m.window.end, m.window.start, &t.window_ns))
          return file.damaged(fmt::format("iteration {} of rank row {} ends before it starts", m.window.number, rank));
        t.compute_ns = integer(row, 7);
        t.communication_ns = integer(row, 8);
        t.memory_ns = integer(row, 9);
        t.overlapped_communication_ns = integer(row, 10);
        t.exposed_communication_ns = integer(row, 11);
        t.busy_ns = integer(row, 12);
        t.idle_ns = integer(row, 13);
        t.non_compute_ns = t.busy_ns - t.compute_ns;
        m.collective_wait_ns = integer(row, 14);
        for (std::size_t g = 0; g < kCollectiveGroups; ++g) t.exposed_by_collective_ns[g] = integer(row, 15 + static_cast<int>(g));
        a.rank_iterations.push_back(m);
        return trace::Status{};
      });
  if (!s) return s;
  // Rows come by iteration, so each rank's windows arrive in order and the numbers ascend.
  for (const RankIterationMetrics& m : a.rank_iterations) {
    a.iterations.per_rank[m.rank].push_back(m.window);
    if (a.iterations.numbers.empty() || a.iterations.numbers.back() != m.window.number)
      a.iterations.numbers.push_back(m.window.number);
  }
  summarizeRanks(a);
  return out;
}

trace::Result<RunModel> loadStoredRanks(const std::filesystem::path& run_dir, const StoredResults& results,
                                        const std::vector<Index>& rows, const std::vector<bool>& read,
                                        const LoadOptions& options) {
  std::vector<RankInfo> ranks;
  for (Index r : rows) {
    const StoredRank& s = results.ranks[r];
    RankInfo info;
    info.rank = s.rank;
    info.host = s.host;
    info.store_path = (run_dir / s.store.filename()).string();
    ranks.push_back(std::move(info));
  }
  auto model = loadRanksOfRun(ranks, read, options);
  if (!model) return model;
  // Aligning a few ranks from their own collectives would give other offsets than the analysis
  // made from every rank: the results' offsets are applied instead.
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto r = static_cast<Index>(i);
    shiftRank(*model, r, results.ranks[rows[i]].to_aligned_ns - model->ranks[r].to_aligned_ns);
  }
  return model;
}

}  // namespace syncopate::analyzer
