// Nsight Systems SQLite exports: the small export the tests build (nsys_export_writer.hpp)
// imported, and what lands in the stores.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "nsys_export_writer.hpp"
#include "scratch_dir.hpp"
#include "syncopate/analyzer/importers.hpp"
#include "syncopate/analyzer/run_loader.hpp"

namespace syncopate::analyzer {
namespace {

using testing::ScratchDir;

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << " in " << sql;
}

TEST(NsysImport, OneStorePerProcessWithEveryJoin) {
  ScratchDir dir;
  ASSERT_EQ(testing::writeNsysExport(dir / "job.sqlite"), "");
  const std::filesystem::path file = dir / "job.sqlite";
  auto report = importNsys(std::span(&file, 1), dir / "run");
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_EQ(report->stores.size(), 2u);
  EXPECT_EQ(report->stores[0].rank, 0);  // pid 100
  EXPECT_EQ(report->stores[1].rank, 1);  // pid 200
  EXPECT_EQ(report->stores[0].ops, 4);   // kernel, all-reduce, memcpy, stream sync
  EXPECT_EQ(report->stores[0].api_calls, 4);
  EXPECT_EQ(report->stores[0].nvtx_ranges, 2);
  EXPECT_EQ(report->stores[0].collectives, 1);
  EXPECT_EQ(report->stores[0].not_stored, 1);  // the NVTX category event

  auto m = loadRun(dir / "run");
  ASSERT_TRUE(m.ok()) << m.message();
  ASSERT_EQ(m->ranks.size(), 2u);
  EXPECT_EQ(m->ranks[0].host, "gpu-node-7");
  EXPECT_EQ(m->ranks[0].pid, 100);
  EXPECT_EQ(m->ranks[0].to_aligned_ns, 1700000000000000000);
  ASSERT_EQ(m->ranks[0].op_count, 3u);
  // Version suffixes are dropped from API names; the driver call is in the driver domain.
  EXPECT_EQ(m->str(m->api_calls.name[0]), "cudaLaunchKernel");
  const Index driver_call = m->threads[m->ranks[1].first_thread].first_call;
  EXPECT_EQ(m->api_calls.domain[driver_call], trace::ApiDomain::CudaDriver);
  EXPECT_EQ(m->str(m->threads[m->ranks[0].first_thread].name), "main-thread");
  // Ops with their launches; the NCCL kernel became a collective.
  std::size_t collectives = 0, memcpys = 0, launched = 0;
  for (Index op = m->ranks[0].first_op; op < m->ranks[0].first_op + m->ranks[0].op_count; ++op) {
    collectives += m->ops.kind[op] == trace::OpKind::Collective;
    memcpys += m->ops.kind[op] == trace::OpKind::Memcpy;
    launched += m->launchOf(op) != kNone;
    if (m->ops.kind[op] == trace::OpKind::Memcpy) {
      EXPECT_EQ(m->str(m->ops.name[op]), "Memcpy DtoH");
      EXPECT_EQ(m->ops.bytes[op], 4096);
    }
  }
  EXPECT_EQ(collectives, 1u);
  EXPECT_EQ(memcpys, 1u);
  EXPECT_EQ(launched, 3u);
  ASSERT_EQ(m->collectives.size(), 1u);
  EXPECT_EQ(m->collectives.coll_type[0], trace::CollType::AllReduce);
  EXPECT_EQ(m->collectives.dtype[0], trace::DataType::Float32);
  // The stream synchronize is a host sync joined to its call.
  ASSERT_EQ(m->host_syncs.size(), 1u);
  EXPECT_EQ(m->host_syncs.sync_kind[0], trace::SyncKind::Stream);
  EXPECT_EQ(m->str(m->api_calls.name[m->host_syncs.api_call[0]]), "cudaStreamSynchronize");
  // NVTX: the push/pop step and the mark.
  ASSERT_EQ(m->ranges.size(), 2u);
  EXPECT_EQ(m->str(m->ranges.name[0]), "ProfilerStep#1");
  EXPECT_EQ(m->ranges.end[1], m->ranges.start[1]);
}

TEST(NsysImport, RanksFromFileNames) {
  ScratchDir dir;
  ASSERT_EQ(testing::writeNsysExport(dir / "report_rank5.sqlite"), "");
  ASSERT_EQ(testing::writeNsysExport(dir / "report_rank2.sqlite"), "");
  const std::vector<std::filesystem::path> files{dir / "report_rank5.sqlite", dir / "report_rank2.sqlite"};
  auto report = importNsys(files, dir / "run");
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_EQ(report->stores.size(), 4u);
  EXPECT_EQ(report->stores[0].rank, 5);
  EXPECT_EQ(report->stores[2].rank, 2);
}

TEST(NsysImport, BadInputsFailWithASentence) {
  ScratchDir dir;
  testing::writeFile(dir / "text.sqlite", "not sqlite at all, not even close to a header of one");
  auto import = [&](const std::string& name) {
    const std::filesystem::path f = dir / name;
    auto r = importNsys(std::span(&f, 1), dir / ("out-" + name));
    return r.ok() ? std::string("(imported)") : r.message();
  };
  EXPECT_NE(import("text.sqlite").find("not an SQLite database"), std::string::npos) << import("text.sqlite");
  EXPECT_NE(import("missing.sqlite").find("no such file"), std::string::npos);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "other.sqlite").c_str(), &db), SQLITE_OK);
  exec(db, "CREATE TABLE t(x)");
  sqlite3_close(db);
  EXPECT_NE(import("other.sqlite").find("not an Nsight Systems export"), std::string::npos);
  ASSERT_EQ(sqlite3_open((dir / "old.sqlite").c_str(), &db), SQLITE_OK);
  exec(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
           "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, globalPid INT);"
           "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 16777216)");
  sqlite3_close(db);
  EXPECT_NE(import("old.sqlite").find("has no column"), std::string::npos) << import("old.sqlite");
  ASSERT_EQ(sqlite3_open((dir / "empty.sqlite").c_str(), &db), SQLITE_OK);
  exec(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)");
  sqlite3_close(db);
  EXPECT_NE(import("empty.sqlite").find("holds no CUDA activity"), std::string::npos);
}

}  // namespace
}  // namespace syncopate::analyzer
