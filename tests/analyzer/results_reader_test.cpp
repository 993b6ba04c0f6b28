// DIR/analysis.sqlite read back (results_reader.hpp) equals the analysis that wrote it, and the
// ranks of a run with only some stores' rows, on the results' clock alignment (loadStoredRanks),
// are every rank, with exactly those stores' rows of a whole load. Results that
// are missing, of another version, damaged or of other stores are refused with a sentence.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <numeric>
#include <string>

#include "analysed_run.hpp"
#include "scratch_dir.hpp"
#include "synthetic_run.hpp"
#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/results_reader.hpp"

namespace syncopate::analyzer {
namespace {

using testing::ScratchDir;

constexpr int kRanks = 16;  // two hosts of 8, whose clocks disagree: alignment is refined

struct AnalysedRun {
  ScratchDir dir;
  RunModel model;
  Analysis analysis;
};

// A synthetic run of two iterations per rank, analysed, its results written as `analyze` does.
void analyseRun(AnalysedRun& run) {
  const trace::Status written = synthetic::writeSyntheticRun(
      run.dir.path(), {.ops = std::int64_t{kRanks} * 2 * synthetic::kOpsPerIteration, .ranks = kRanks, .ranks_per_host = 8});
  ASSERT_TRUE(written.ok()) << written.message();
  auto analysed = testing::analyseIntoRunDir(run.dir.path());
  ASSERT_TRUE(analysed.ok()) << analysed.message();
  run.model = std::move(analysed->model);
  run.analysis = std::move(analysed->analysis);
}

void expectSameTime(const TimeBreakdown& a, const TimeBreakdown& b, const std::string& where) {
  EXPECT_EQ(a.window_ns, b.window_ns) << where;
  EXPECT_EQ(a.compute_ns, b.compute_ns) << where;
  EXPECT_EQ(a.communication_ns, b.communication_ns) << where;
  EXPECT_EQ(a.memory_ns, b.memory_ns) << where;
  EXPECT_EQ(a.overlapped_communication_ns, b.overlapped_communication_ns) << where;
  EXPECT_EQ(a.exposed_communication_ns, b.exposed_communication_ns) << where;
  EXPECT_EQ(a.busy_ns, b.busy_ns) << where;
  EXPECT_EQ(a.idle_ns, b.idle_ns) << where;
  EXPECT_EQ(a.non_compute_ns, b.non_compute_ns) << where;
  EXPECT_EQ(a.exposed_by_collective_ns, b.exposed_by_collective_ns) << where;
}

void execute(const std::filesystem::path& db_file, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_file.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST(StoredResults, ReadBackEqualTheAnalysisThatWroteThem) {
  AnalysedRun run;
  ASSERT_NO_FATAL_FAILURE(analyseRun(run));
  auto stored = readStoredResults(run.dir.path());
  ASSERT_TRUE(stored.ok()) << stored.message();

  ASSERT_EQ(stored->ranks.size(), run.model.ranks.size());
  for (Index r = 0; r < run.model.ranks.size(); ++r) {
    EXPECT_EQ(stored->ranks[r].rank, run.model.ranks[r].rank);
    EXPECT_EQ(stored->ranks[r].host, run.model.ranks[r].host);
    EXPECT_EQ(stored->ranks[r].store, run.model.ranks[r].store_path);
    EXPECT_EQ(stored->ranks[r].to_aligned_ns, run.model.ranks[r].to_aligned_ns);
  }
  // The two hosts' clocks were refined apart: the offsets say something.
  EXPECT_NE(stored->ranks[0].to_aligned_ns, stored->ranks[8].to_aligned_ns);

  const Analysis& a = stored->analysis;
  EXPECT_EQ(a.iterations.source, run.analysis.iterations.source);
  EXPECT_EQ(a.iterations.numbers, run.analysis.iterations.numbers);
  ASSERT_EQ(a.iterations.per_rank.size(), run.analysis.iterations.per_rank.size());
  for (std::size_t r = 0; r < a.iterations.per_rank.size(); ++r) {
    ASSERT_EQ(a.iterations.per_rank[r].size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      const RankIteration& x = a.iterations.per_rank[r][i];
      const RankIteration& y = run.analysis.iterations.per_rank[r][i];
      EXPECT_EQ(x.number, y.number);
      EXPECT_EQ(x.start, y.start);
      EXPECT_EQ(x.end, y.end);
      EXPECT_EQ(x.host_start, y.host_start);
      EXPECT_EQ(x.host_end, y.host_end);
      EXPECT_EQ(x.op_count, y.op_count);
    }
  }
  ASSERT_EQ(a.rank_iterations.size(), std::size_t{kRanks} * 2);
  for (std::size_t i = 0; i < a.rank_iterations.size(); ++i) {
    const RankIterationMetrics& x = a.rank_iterations[i];
    const RankIterationMetrics& y = run.analysis.rank_iterations[i];
    const std::string where = "row " + std::to_string(i);
    EXPECT_EQ(x.rank, y.rank) << where;
    EXPECT_EQ(x.window.number, y.window.number) << where;
    EXPECT_EQ(x.collective_wait_ns, y.collective_wait_ns) << where;
    expectSameTime(x.time, y.time, where);
  }
  // Rank 13 waits for nobody and everyone waits for it: the waits are not all zero.
  EXPECT_GT(a.ranks[0].collective_wait_ns, 0);
  ASSERT_EQ(a.ranks.size(), run.analysis.ranks.size());
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    const std::string where = "rank row " + std::to_string(r);
    EXPECT_EQ(a.ranks[r].rank, run.analysis.ranks[r].rank) << where;
    EXPECT_EQ(a.ranks[r].iterations, run.analysis.ranks[r].iterations) << where;
    EXPECT_EQ(a.ranks[r].collective_wait_ns, run.analysis.ranks[r].collective_wait_ns) << where;
    expectSameTime(a.ranks[r].total, run.analysis.ranks[r].total, where);
    expectSameTime(a.ranks[r].mean, run.analysis.ranks[r].mean, where);
  }
  expectSameTime(a.aggregate, run.analysis.aggregate, "aggregate");
  ASSERT_EQ(stored->collectives.size(), run.analysis.collectives.calls.size());
  ASSERT_FALSE(stored->collectives.empty());
  for (std::size_t i = 0; i < stored->collectives.size(); ++i) {
    const StoredCollective& x = stored->collectives[i];
    const CollectiveTiming& y = run.analysis.collectives.calls[i];
    EXPECT_EQ(x.comm_id, run.model.matches.comm_id[y.match]) << "collective " << i;
    EXPECT_EQ(x.seq, run.model.matches.seq[y.match]) << "collective " << i;
    EXPECT_EQ(x.ranks, kRanks) << "collective " << i;
    EXPECT_EQ(x.first_arrival_ns, y.first_arrival) << "collective " << i;
    EXPECT_EQ(x.last_arrival_ns, y.last_arrival) << "collective " << i;
    EXPECT_EQ(x.end_ns, y.end) << "collective " << i;
  }
  EXPECT_EQ(a.aggregate_collective_wait_ns, run.analysis.aggregate_collective_wait_ns);
}

TEST(StoredResults, SomeRanksRowsOfARunAreExactlyThoseOfAWholeLoad) {
  AnalysedRun run;
  ASSERT_NO_FATAL_FAILURE(analyseRun(run));
  auto stored = readStoredResults(run.dir.path());
  ASSERT_TRUE(stored.ok()) << stored.message();
  const Index wanted = 9;  // on the second host, whose clock alignment was refined
  std::vector<Index> every(stored->ranks.size());
  std::iota(every.begin(), every.end(), Index{0});
  std::vector<bool> read(every.size(), false);
  read[wanted] = true;
  auto some = loadStoredRanks(run.dir.path(), *stored, every, read);
  ASSERT_TRUE(some.ok()) << some.message();
  ASSERT_EQ(some->ranks.size(), run.model.ranks.size());
  for (Index r = 0; r < some->ranks.size(); ++r) {
    EXPECT_EQ(some->ranks[r].rank, run.model.ranks[r].rank);
    EXPECT_EQ(some->ranks[r].host, run.model.ranks[r].host);
    EXPECT_EQ(some->ranks[r].op_count, r == wanted ? run.model.ranks[r].op_count : 0) << "rank row " << r;
    EXPECT_EQ(some->ranks[r].to_aligned_ns, stored->ranks[r].to_aligned_ns) << "rank row " << r;
  }
  const RankInfo& mine = some->ranks[wanted];
  const RankInfo& whole = run.model.ranks[wanted];
  ASSERT_EQ(some->ops.size(), whole.op_count);
  ASSERT_GT(whole.op_count, 0u);
  for (Index i = 0; i < whole.op_count; ++i) {
    ASSERT_EQ(some->ops.start[mine.first_op + i], run.model.ops.start[whole.first_op + i]) << "op " << i;
    ASSERT_EQ(some->ops.end[mine.first_op + i], run.model.ops.end[whole.first_op + i]) << "op " << i;
  }
  std::size_t calls = 0;
  for (Index t = whole.first_thread; t < whole.first_thread + whole.thread_count; ++t) calls += run.model.threads[t].call_count;
  EXPECT_EQ(some->api_calls.size(), calls);
}

TEST(StoredResults, MissingResultsSayToAnalyseTheRun) {
  ScratchDir dir;
  auto stored = readStoredResults(dir.path());
  ASSERT_FALSE(stored.ok());
  EXPECT_EQ(stored.message(), dir.path().string() + " has no analysis.sqlite: run 'syncopate analyze " + dir.path().string() +
                                  "' first");
}

TEST(StoredResults, ResultsOfOtherStoresAreRefused) {
  AnalysedRun run;
  ASSERT_NO_FATAL_FAILURE(analyseRun(run));
  // A store written after the results: the run was recorded again into the directory.
  const auto results_time = std::filesystem::last_write_time(run.dir / "analysis.sqlite");
  std::filesystem::last_write_time(run.dir / "rank-3.sqlite", results_time + std::chrono::seconds(5));
  auto newer = readStoredResults(run.dir.path());
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.message().find("is not of the run as it is now (rank-3.sqlite was written after it"), std::string::npos)
      << newer.message();
  std::filesystem::last_write_time(run.dir / "rank-3.sqlite", results_time);

  std::filesystem::remove(run.dir / "rank-15.sqlite");
  auto stored = readStoredResults(run.dir.path());
  ASSERT_FALSE(stored.ok());
  EXPECT_NE(stored.message().find("it holds the results of 16 stores, and the directory now holds 15 stores"), std::string::npos)
      << stored.message();
  EXPECT_NE(stored.message().find("run 'syncopate analyze"), std::string::npos) << stored.message();
}

TEST(StoredResults, AnotherVersionOrADamagedRowIsRefused) {
  AnalysedRun run;
  ASSERT_NO_FATAL_FAILURE(analyseRun(run));
  const auto db = run.dir / "analysis.sqlite";
  execute(db, "UPDATE iterations SET rank_row = 99 WHERE rowid = 3");
  auto damaged = readStoredResults(run.dir.path());
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.message().find("an iteration row names rank row 99, of 16 ranks"), std::string::npos) << damaged.message();

  execute(db, "UPDATE meta SET value = '2.0' WHERE key = 'schema_version'");
  auto newer = readStoredResults(run.dir.path());
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.message().find("its schema version is '2.0', and this build reads 1.x"), std::string::npos) << newer.message();

  std::filesystem::resize_file(db, 100);  // not a database any more
  auto torn = readStoredResults(run.dir.path());
  ASSERT_FALSE(torn.ok());
  EXPECT_NE(torn.message().find("analysis.sqlite"), std::string::npos) << torn.message();
}

}  // namespace
}  // namespace syncopate::analyzer
