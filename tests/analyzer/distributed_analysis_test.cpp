// Distributed analysis, run under mpirun with two processes, each analysing the ranks whose
// stores it read and walking their legs of the critical path: the root's analysis and results
// equal those of one process reading every store; a store one process cannot read leaves a
// partial run that names it; more processes than stores, or the critical path over a share read
// in batches, is refused by every process alike.
#include <gtest/gtest.h>
#include <mpi.h>

#include <optional>
#include <string>

#include "scratch_dir.hpp"
#include "synthetic_run.hpp"
#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/distributed_analysis.hpp"
#include "syncopate/analyzer/report.hpp"
#include "syncopate/analyzer/run_loader.hpp"

namespace syncopate::analyzer {
namespace {

using testing::ScratchDir;

const MpiSession* session = nullptr;

// The root's directory, made by the root and named to every process.
class SharedDir {
 public:
  SharedDir() {
    std::string path;
    if (session->root()) dir_.emplace(), path = dir_->path().string();
    int length = static_cast<int>(path.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
    path.resize(static_cast<std::size_t>(length));
    MPI_Bcast(path.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = path;
  }
  ~SharedDir() { MPI_Barrier(MPI_COMM_WORLD); }  // nobody still reads it when the root removes it
  const std::filesystem::path& path() const { return path_; }

 private:
  std::optional<ScratchDir> dir_;
  std::filesystem::path path_;
};

// The root writes a synthetic run of two iterations per rank into `dir`; all wait for it.
void writeRun(const std::filesystem::path& dir, int ranks, bool waits_on_earlier_event = false) {
  trace::Status written;
  if (session->root())
    written = synthetic::writeSyntheticRun(dir, {.ops = std::int64_t{ranks} * 2 * synthetic::kOpsPerIteration,
                                                 .ranks = ranks, .ranks_per_host = 8,
                                                 .waits_on_earlier_event = waits_on_earlier_event});
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_TRUE(written.ok()) << written.message();
}

struct Results {
  std::string json, sqlite;
};

// Each process analyses the ranks it read; the root's model holds what the ranks share (their
// collectives, and the first and last row of each table for the run's span; each rank's
// unmatched event waits counted where it was read); the critical path is walked in legs by the
// processes holding its ranks; and the results are one process's whole analysis.
enum class Path { None, Walked, CrossesProcesses };
void expectRanksAnalysedApartEqualSingle(int ranks, Path path, bool waits_on_earlier_event = false) {
  SharedDir dir;
  writeRun(dir.path(), ranks, waits_on_earlier_event);
  AnalysisOptions options;
  options.critical_path = path != Path::None;
  auto distributed = analyzeRunDistributed(*session, dir.path(), {}, options);
  ASSERT_TRUE(distributed.ok()) << distributed.message();
  EXPECT_EQ(distributed->stores_per_process, (std::vector<int>{ranks / 2, ranks / 2}));
  if (!session->root()) {
    EXPECT_FALSE(distributed->model.has_value());
    return;
  }
  ASSERT_TRUE(distributed->model.has_value() && distributed->analysis.has_value());
  auto single = loadRun(dir.path());
  ASSERT_TRUE(single.ok()) << single.message();
  auto whole = analyze(*single, options);
  ASSERT_TRUE(whole.ok()) << whole.message();
  const RunModel& summary = *distributed->model;
  EXPECT_EQ(summary.ranks.size(), single->ranks.size());
  EXPECT_EQ(summary.collectives.size(), single->collectives.size());
  std::size_t shared = 0;
  for (Index op = 0; op < single->ops.size(); ++op) {
    const trace::OpKind kind = single->ops.kind[op];
    shared += kind == trace::OpKind::Collective || kind == trace::OpKind::P2P;
  }
  EXPECT_GE(summary.ops.size(), shared);
  EXPECT_LE(summary.ops.size(), shared + 2 * single->ranks.size());
  EXPECT_LE(summary.host_syncs.size(), 2 * single->ranks.size());
  // Their launching calls, the calls of the host syncs kept, and the first and last call of each rank.
  EXPECT_LE(summary.api_calls.size(), shared + 4 * single->ranks.size());
  EXPECT_EQ(summary.event_markers.size(), 0u);
  EXPECT_EQ(summary.unmatched_events.waits, single->unmatched_events.waits);
  EXPECT_EQ(summary.unmatched_events.syncs, single->unmatched_events.syncs);
  if (waits_on_earlier_event) {
    EXPECT_EQ(single->unmatched_events.waits, ranks);
    EXPECT_EQ(single->unmatched_events.syncs, ranks);
  }
  EXPECT_EQ(distributed->analysis->run_ops, single->ops.size());
  EXPECT_EQ(distributed->analysis->run_api_calls, single->api_calls.size());
  ScratchDir out;
  const auto written = [&](const RunModel& m, const Analysis& a, const std::filesystem::path& to) -> Results {
    const nlohmann::json doc = analysisToJson(m, a, {.top_kernels = 10, .run_dir = dir.path().string()});
    std::filesystem::create_directories(to);
    const trace::Status status = writeAnalysisResults(to, m, a, doc);
    EXPECT_TRUE(status.ok()) << status.message();
    return {testing::readFile(to / "analysis.json"), testing::readFile(to / "analysis.sqlite")};
  };
  if (path != Path::None) {
    ASSERT_FALSE(whole->critical_paths.empty());
  }
  if (path == Path::CrossesProcesses) {
    // The paths pass through ranks of both processes (blocks of 8 ranks dealt in turn), so
    // they were stitched from legs each process walked.
    bool by_process[2] = {false, false};
    for (const CriticalPath& p : distributed->analysis->critical_paths)
      for (const PathSegment& seg : p.segments) by_process[(seg.rank / 8) % 2] = true;
    EXPECT_TRUE(by_process[0] && by_process[1]);
  }
  const Results one = written(*single, *whole, out / "single");
  const Results many = written(summary, *distributed->analysis, out / "distributed");
  ASSERT_FALSE(one.json.empty());
  EXPECT_TRUE(one.json == many.json) << "analysis.json differs";
  EXPECT_TRUE(one.sqlite == many.sqlite) << "analysis.sqlite differs";
  EXPECT_EQ(analysisToText(*single, *whole), analysisToText(summary, *distributed->analysis));
}

TEST(DistributedAnalysis, RanksAnalysedWhereTheyWereReadEqualSingleProcessOn64Ranks) {
  expectRanksAnalysedApartEqualSingle(64, Path::CrossesProcesses);
}

TEST(DistributedAnalysis, RanksAnalysedWhereTheyWereReadEqualSingleProcessOn256Ranks) {
  expectRanksAnalysedApartEqualSingle(256, Path::Walked);
}

TEST(DistributedAnalysis, RanksAnalysedWhereTheyWereReadWithoutTheCriticalPathEqualSingleProcess) {
  expectRanksAnalysedApartEqualSingle(64, Path::None);
}

// Each rank's first step waits for an event recorded before the recording: the waits and syncs
// that match no record are counted where each rank was read, and the diagnostics say as many as
// one process's (checked within: the results are the same).
TEST(DistributedAnalysis, RanksAnalysedApartCountUnmatchedEventWaitsAsOneProcessDoes) {
  expectRanksAnalysedApartEqualSingle(16, Path::CrossesProcesses, true);
}

// The walk needs each process's ranks at once: a share that fits the memory limit only in
// batches is refused by every process, with the way out.
TEST(DistributedAnalysis, CriticalPathOverAShareInBatchesIsRefusedByEveryProcess) {
  SharedDir dir;
  writeRun(dir.path(), 32);
  LoadOptions load;
  load.memory_limit = 1 << 20;
  auto distributed = analyzeRunDistributed(*session, dir.path(), load, {});
  ASSERT_FALSE(distributed.ok());
  EXPECT_NE(distributed.message().find("the critical path walks a process's ranks at once: start more processes, raise the "
                                       "limit, or analyse without the critical path (--no-critical-path)"),
            std::string::npos)
      << distributed.message();
}

TEST(DistributedAnalysis, StoreItsProcessCannotReadLeavesAPartialRunNamingIt) {
  SharedDir dir;
  writeRun(dir.path(), 8);
  // Rank 7 falls in the second process's block (7 * 2 / 8 = 1).
  if (session->root()) testing::writeFile(dir.path() / "rank-7.sqlite", "not a store");
  MPI_Barrier(MPI_COMM_WORLD);
  auto distributed = analyzeRunDistributed(*session, dir.path(), {}, {});
  ASSERT_TRUE(distributed.ok()) << distributed.message();
  if (!session->root()) return;
  ASSERT_TRUE(distributed->model.has_value() && distributed->analysis.has_value());
  const RunModel& model = *distributed->model;
  EXPECT_EQ(model.ranks.size(), 7u);
  EXPECT_EQ(distributed->analysis->ranks.size(), 7u);
  EXPECT_FALSE(distributed->analysis->critical_paths.empty());
  std::size_t missing = 0;
  for (const trace::DiagnosticRow& d : model.diagnostics) {
    if (d.message.find("the analysis is partial") == std::string::npos) continue;
    ++missing;
    EXPECT_EQ(d.severity, trace::Severity::Error);
    EXPECT_EQ(d.source, "rank-7.sqlite");
    EXPECT_NE(d.message.find("the store of rank 7 (rank-7.sqlite) could not be read by the process it was given to "
                             "(process 1 of 2 on "),
              std::string::npos)
        << d.message;
  }
  EXPECT_EQ(missing, 1u);
}

TEST(DistributedAnalysis, MoreProcessesThanStoresIsRefusedByEveryProcess) {
  SharedDir dir;
  writeRun(dir.path(), 1);
  auto distributed = analyzeRunDistributed(*session, dir.path(), {}, {});
  ASSERT_FALSE(distributed.ok());
  EXPECT_EQ(distributed.message(), "2 processes were started for the 1 stores of " + dir.path().string() +
                                       ": start at most one process per store (mpirun -n 1 syncopate analyze " +
                                       dir.path().string() + ")");
}

TEST(DistributedAnalysis, StoresGoInBlocksToProcessesThatSeeThem) {
  // Four stores, two processes; the second process cannot see store 3.
  const std::vector<std::vector<bool>> sees = {{true, true}, {true, true}, {true, true}, {true, false}};
  EXPECT_EQ(assignStores(sees, 2), (std::vector<int>{0, 0, 1, 0}));
  // Stores only one process sees all go to it.
  EXPECT_EQ(assignStores({{false, true}, {false, true}, {true, false}}, 2), (std::vector<int>{1, 1, 0}));
}

}  // namespace
}  // namespace syncopate::analyzer

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto mpi = syncopate::analyzer::MpiSession::start();
  if (!mpi.ok()) {
    std::fprintf(stderr, "%s\n", mpi.message().c_str());
    return 1;
  }
  syncopate::analyzer::session = &*mpi;
  // The tests' figures (stores per process, "process 1 of 2") are those of two processes.
  if (mpi->size() != 2) {
    std::fprintf(stderr, "distributed_analysis_test runs under mpirun -n 2 (started with %d processes)\n", mpi->size());
    return 1;
  }
  // One report, the root's; every process's failures count in the exit status.
  if (!mpi->root()) delete ::testing::UnitTest::GetInstance()->listeners().Release(
      ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}
