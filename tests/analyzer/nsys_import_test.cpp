// Nsight Systems SQLite exports. No real export is stored here, so the test builds one with the
// tables and columns of Nsight's documented export schema (the subset the importer reads) and
// checks what lands in the stores.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "scratch_dir.hpp"
#include "syncopate/analyzer/importers.hpp"
#include "syncopate/analyzer/run_loader.hpp"

namespace syncopate::analyzer {
namespace {

using testing::ScratchDir;

// Nsight's globalTid/globalPid: pid in bits 24..47, tid in bits 0..23.
constexpr std::int64_t global(std::int64_t pid, std::int64_t tid) { return (pid << 24) | tid; }

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << " in " << sql;
}

// Two processes (pids 100 and 200); process 100 launches a kernel and an NCCL all-reduce,
// copies to the host, synchronises, and marks a step with NVTX.
void writeExport(const std::filesystem::path& file) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  exec(db, R"sql(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INT, utcTime TEXT, localTime TEXT);
    CREATE TABLE TARGET_INFO_SYSTEM_ENV (name TEXT, value TEXT);
    CREATE TABLE ThreadNames (nameId INT NOT NULL, priority INT, globalTid INT);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT NOT NULL, end INT NOT NULL, eventClass INT NOT NULL,
      globalTid INT, correlationId INT, nameId INT NOT NULL, returnValue INT NOT NULL, callchainId INT);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,
      contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT, globalPid INT, demangledName INT NOT NULL,
      shortName INT NOT NULL, mangledName INT, launchType INT, cacheConfig INT, registersPerThread INT NOT NULL,
      gridX INT NOT NULL, gridY INT NOT NULL, gridZ INT NOT NULL, blockX INT NOT NULL, blockY INT NOT NULL,
      blockZ INT NOT NULL, staticSharedMemory INT NOT NULL, dynamicSharedMemory INT NOT NULL);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,
      contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT, globalPid INT, bytes INT NOT NULL,
      copyKind INT NOT NULL, deprecatedSrcId INT, srcKind INT, dstKind INT);
    CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,
      contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT, globalPid INT, syncType INT NOT NULL,
      eventId INT NOT NULL);
    CREATE TABLE NVTX_EVENTS (start INT NOT NULL, end INT, eventType INT NOT NULL, rangeId INT, category INT,
      color INT, text TEXT, globalTid INT, endGlobalTid INT, textId INT, domainId INT, uint64Value INT);
    INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'ncclAllReduce'), (3, 'gemm_kernel'),
      (4, 'gemm'), (5, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),
      (6, 'ncclDevKernel_AllReduce'), (7, 'cudaMemcpyAsync_v3020'), (8, 'cudaStreamSynchronize_v3020'),
      (9, 'main-thread'), (10, 'cuLaunchKernel');
    INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '');
    INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES ('Hostname', 'gpu-node-7');
  )sql");
  const std::int64_t t100 = global(100, 101), t200 = global(200, 201);
  exec(db, "INSERT INTO ThreadNames VALUES (9, 0, " + std::to_string(t100) + ")");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES "
           "(1000, 2000, 1, " + std::to_string(t100) + ", 11, 1, 0, NULL),"
           "(3000, 4000, 1, " + std::to_string(t100) + ", 12, 2, 0, NULL),"
           "(5000, 9000, 1, " + std::to_string(t100) + ", 13, 7, 0, NULL),"
           "(9500, 20000, 1, " + std::to_string(t100) + ", 14, 8, 0, NULL),"
           "(1000, 1500, 1, " + std::to_string(t200) + ", 21, 10, 0, NULL)");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
           "(2500, 6000, 0, 1, 7, 11, " + std::to_string(global(100, 0)) + ", 3, 4, NULL, 0, 0, 32, 64,1,1, 256,1,1, 0, 0),"
           "(6000, 19000, 0, 1, 13, 12, " + std::to_string(global(100, 0)) + ", 5, 6, NULL, 0, 0, 32, 8,1,1, 512,1,1, 0, 0),"
           "(2000, 3000, 1, 1, 7, 21, " + std::to_string(global(200, 0)) + ", 3, 4, NULL, 0, 0, 32, 1,1,1, 1,1,1, 0, 0)");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (6100, 8000, 0, 1, 7, 13, " + std::to_string(global(100, 0)) +
               ", 4096, 2, 0, 0, 0)");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (9600, 19900, 0, 1, 13, 14, " +
               std::to_string(global(100, 0)) + ", 3, 0)");
  exec(db, "INSERT INTO NVTX_EVENTS VALUES (500, 25000, 59, NULL, NULL, NULL, 'ProfilerStep#1', " + std::to_string(t100) +
               ", NULL, NULL, 0, NULL), (700, 700, 34, NULL, NULL, NULL, 'mark', " + std::to_string(t100) +
               ", NULL, NULL, 0, NULL), (0, NULL, 33, NULL, NULL, NULL, 'a category', " + std::to_string(t100) +
               ", NULL, NULL, 0, NULL)");
  sqlite3_close(db);
}

TEST(NsysImport, OneStorePerProcessWithEveryJoin) {
  ScratchDir dir;
  writeExport(dir / "job.sqlite");
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
  writeExport(dir / "report_rank5.sqlite");
  writeExport(dir / "report_rank2.sqlite");
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
