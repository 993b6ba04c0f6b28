// Nsight Systems SQLite exports: the small export the tests build (nsys_export_writer.hpp)
// imported, and what lands in the stores.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>

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

// Process 100 of the written export, with what exports record of a process that records an
// event on stream 7 behind a kernel (launch 20000-20050, kernel 20060-24000, cudaEventRecord
// 20100-20200), makes stream 13 wait for it (cudaStreamWaitEvent 20300-20400), synchronises
// on it (cudaEventSynchronize 20500-24100) and on the device (cudaDeviceSynchronize
// 24200-24300, recorded as CloverLeaf's export records it: an event synchronize with neither
// event nor stream, 0xFFFFFFFF). `enum_table`: the ENUM_CUPTI_SYNC_TYPE table of Nsight
// 2024.5's exports, numbered otherwise than CUPTI to show it is read (older exports have none:
// CUPTI's numbering); `event_table`: CUPTI_ACTIVITY_KIND_CUDA_EVENT, with CUPTI's fields.
void addSyncs(const std::filesystem::path& file, bool enum_table, bool event_table) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  const std::string tid = std::to_string((100LL << 24) | 101), pid = std::to_string(100LL << 24);
  // With the enum table, event synchronize is 7 and stream wait event 8.
  const std::string event_sync = enum_table ? "7" : "1", stream_wait = enum_table ? "8" : "2";
  exec(db, "INSERT INTO StringIds VALUES (20, 'cudaEventRecord_v3020'), (21, 'cudaStreamWaitEvent_v3020'),"
           " (22, 'cudaEventSynchronize_v3020'), (23, 'cudaDeviceSynchronize_v3020')");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (20000, 20050, 1, " + tid + ", 29, 1, 0, NULL), (20100, 20200, 1, " +
               tid + ", 30, 20, 0, NULL), (20300, 20400, 1, " + tid + ", 31, 21, 0, NULL), (20500, 24100, 1, " + tid +
               ", 32, 22, 0, NULL), (24200, 24300, 1, " + tid + ", 33, 23, 0, NULL)");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (20060, 24000, 0, 1, 7, 29, " + pid +
               ", 3, 4, NULL, 0, 0, 32, 1,1,1, 1,1,1, 0, 0)");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (20300, 20400, 0, 1, 13, 31, " + pid + ", " +
               stream_wait + ", 5), (20500, 24050, 0, 1, 4294967295, 32, " + pid + ", " + event_sync +
               ", 5), (24200, 24300, 0, 1, 4294967295, 33, " + pid + ", " + event_sync + ", 4294967295)");
  if (enum_table)
    exec(db, "CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
             "INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (0, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN', 'Unknown'),"
             " (7, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE', 'Event sync'),"
             " (8, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT', 'Stream wait sync'),"
             " (3, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE', 'Stream sync'),"
             " (4, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE', 'Context sync')");
  if (event_table)
    exec(db, "CREATE TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT (deviceId INT NOT NULL, contextId INT NOT NULL,"
             " streamId INT NOT NULL, correlationId INT, globalPid INT, eventId INT NOT NULL);"
             "INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT VALUES (0, 1, 7, 30, " + pid + ", 5)");
  sqlite3_close(db);
}

bool hasDiagnostic(const RunModel& m, std::string_view sentence_start) {
  for (const auto& d : m.diagnostics)
    if (d.message.starts_with(sentence_start)) return true;
  return false;
}

// Every synchronisation record becomes what it is: the stream wait an op of stream 13 that
// waits for the event's record on stream 7, timed when the kernel issued before it ended
// (24000); the event sync a host sync on event 5 joined to cudaEventSynchronize; the record
// labelled event synchronize for cudaDeviceSynchronize a device sync, said in a diagnostic
// (which needs the record's own type read right: through the enum table where there is one).
TEST(NsysImport, SyncRecordsBecomeTheWaitsTheyAre) {
  for (const bool enum_table : {false, true}) {
    SCOPED_TRACE(enum_table ? "with ENUM_CUPTI_SYNC_TYPE" : "CUPTI's numbering");
    ScratchDir dir;
    const std::filesystem::path file = dir / "job.sqlite";
    ASSERT_EQ(testing::writeNsysExport(file), "");
    addSyncs(file, enum_table, true);
    auto report = importNsys(std::span(&file, 1), dir / "run");
    ASSERT_TRUE(report.ok()) << report.message();
    auto m = loadRun(dir / "run");
    ASSERT_TRUE(m.ok()) << m.message();
    ASSERT_EQ(m->host_syncs.size(), 3u);
    std::map<std::string, trace::SyncKind> kinds;
    for (Index h = 0; h < m->host_syncs.size(); ++h)
      kinds[std::string(m->str(m->api_calls.name[m->host_syncs.api_call[h]]))] = m->host_syncs.sync_kind[h];
    EXPECT_EQ(kinds, (std::map<std::string, trace::SyncKind>{{"cudaStreamSynchronize", trace::SyncKind::Stream},
                                                             {"cudaEventSynchronize", trace::SyncKind::Event},
                                                             {"cudaDeviceSynchronize", trace::SyncKind::Device}}));
    Index waits = 0;
    for (Index e = 0; e < m->flows.size(); ++e) {
      if (m->flows.kind(e) != FlowKind::EventWait) continue;
      ++waits;
      const Index record = m->flows.src(e).index(), wait = m->flows.dst(e).index();
      EXPECT_EQ(m->streams[m->ops.stream[record]].handle, 7u);
      EXPECT_EQ(m->streams[m->ops.stream[wait]].handle, 13u);
      EXPECT_EQ(m->ops.start[record] - m->ranks[0].to_aligned_ns, 24000);
      EXPECT_EQ(m->ops.start[wait] - m->ranks[0].to_aligned_ns, 20300);
    }
    EXPECT_EQ(waits, 1u);
    EXPECT_TRUE(hasDiagnostic(*m, "synchronization records whose type disagreed with the API call"));
    EXPECT_FALSE(hasDiagnostic(*m, "event syncs and stream waits, but the export has no CUDA event records"));
  }
}

// An export without CUDA event records (Nsight collects them only on request): the stream wait
// has no record to depend on, and the import says so.
TEST(NsysImport, SyncRecordsWithoutEventRecordsSaySo) {
  ScratchDir dir;
  const std::filesystem::path file = dir / "job.sqlite";
  ASSERT_EQ(testing::writeNsysExport(file), "");
  addSyncs(file, false, false);
  auto report = importNsys(std::span(&file, 1), dir / "run");
  ASSERT_TRUE(report.ok()) << report.message();
  auto m = loadRun(dir / "run");
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->host_syncs.size(), 3u);
  for (Index e = 0; e < m->flows.size(); ++e) EXPECT_NE(m->flows.kind(e), FlowKind::EventWait);
  EXPECT_TRUE(hasDiagnostic(*m, "event syncs and stream waits, but the export has no CUDA event records"));
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
