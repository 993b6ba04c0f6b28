// Stores written through the trace library's writer load into the model with every join
// (correlation ids, collectives, streams, threads) resolved; damaged stores fail with a sentence.
#include "syncopate/analyzer/run_loader.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "scratch_dir.hpp"
#include "syncopate/trace/catalog.hpp"
#include "syncopate/trace/diagnostics.hpp"
#include "syncopate/trace/writer.hpp"

namespace syncopate::analyzer {
namespace {

using testing::ScratchDir;

constexpr std::int64_t kUs = 1000;

// One rank's store: a launch of a compute kernel, an all-reduce, a stream sync and a step
// range, with times given on the host's monotonic clock.
void writeRankStore(const std::filesystem::path& dir, int rank, const std::string& host, std::int64_t realtime_offset,
                    std::int64_t allreduce_start, std::int64_t allreduce_end) {
  trace::Catalog catalog;
  auto w = trace::StoreWriter::create(dir, {host, 100 + rank, rank, "synthetic"}, catalog);
  ASSERT_TRUE(w.ok()) << w.message();
  trace::StoreWriter& writer = **w;
  ASSERT_TRUE(writer.setMeta("realtime_offset_ns", std::to_string(realtime_offset)).ok());
  ASSERT_TRUE(writer.setMeta("world_size", "2").ok());
  const trace::StreamId compute = catalog.registerStream({0, 0x10, std::nullopt, std::nullopt, catalog.intern("compute")});
  const trace::StreamId comm = catalog.registerStream({0, 0x20, std::nullopt, std::nullopt, catalog.intern("nccl")});
  const trace::ThreadId thread = catalog.registerThread({1000 + rank, catalog.intern("main")});

  auto call = [&](const char* name, std::int64_t corr, std::int64_t start, std::int64_t end) {
    trace::ApiCallRow r;
    r.thread_id = thread;
    r.name_id = catalog.intern(name);
    r.start_ns = start;
    r.end_ns = end;
    r.correlation_id = corr;
    ASSERT_TRUE(writer.writeApiCall(r).ok());
  };
  auto op = [&](trace::OpKind kind, trace::StreamId stream, const char* name, std::int64_t corr, std::int64_t start,
                std::int64_t end) {
    trace::OpRow r;
    r.kind = kind;
    r.device_id = 0;
    r.stream_id = stream;
    r.name_id = catalog.intern(name);
    r.start_ns = start;
    r.end_ns = end;
    r.correlation_id = corr;
    ASSERT_TRUE(writer.writeOp(r).ok());
  };
  trace::NvtxRangeRow step;
  step.thread_id = thread;
  step.name_id = catalog.intern("ProfilerStep#1");
  step.start_ns = 0;
  step.end_ns = 200 * kUs;
  ASSERT_TRUE(writer.writeNvtxRange(step).ok());
  call("cudaLaunchKernel", 1, 1 * kUs, 2 * kUs);
  op(trace::OpKind::Kernel, compute, "gemm", 1, 5 * kUs, 50 * kUs);
  call("ncclAllReduce", 2, 3 * kUs, 4 * kUs);
  op(trace::OpKind::Collective, comm, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2, allreduce_start, allreduce_end);
  trace::CollectiveRow coll;
  coll.correlation_id = 2;
  coll.comm_id = 0xfeedULL;
  coll.comm_rank = rank;
  coll.comm_size = 2;
  coll.seq = 0;
  coll.coll_type = trace::CollType::AllReduce;
  coll.dtype = trace::DataType::Float32;
  coll.count = 1000;
  coll.bytes = 4000;
  ASSERT_TRUE(writer.writeCollective(coll).ok());
  call("cudaStreamSynchronize", 3, 5 * kUs, 101 * kUs);
  trace::OpRow sync;
  sync.kind = trace::OpKind::HostSync;
  sync.device_id = 0;
  sync.stream_id = comm;
  sync.name_id = catalog.intern("Stream sync");
  sync.start_ns = 5 * kUs;
  sync.end_ns = 101 * kUs;
  sync.correlation_id = 3;
  sync.sync_kind = trace::SyncKind::Stream;
  ASSERT_TRUE(writer.writeOp(sync).ok());
  ASSERT_TRUE(writer.addDiagnostic(trace::Severity::Warning, "collector", "records dropped").ok());
  ASSERT_TRUE(writer.close().ok());
}

TEST(LoadRun, JoinsEveryTableAndAlignsHosts) {
  ScratchDir dir;
  // Host B's realtime clock runs 2us ahead of A's: its all-reduce seems to end 2us later.
  writeRankStore(dir.path(), 0, "hostA", 1'000'000, 60 * kUs, 100 * kUs);
  writeRankStore(dir.path(), 1, "hostB", 5'000'000, 70 * kUs - 4'000'000 + 2 * kUs, 100 * kUs - 4'000'000 + 2 * kUs);
  LoadOptions options;
  options.clock.min_samples = 1;  // one all-reduce is enough here
  auto m = loadRun(dir.path(), options);
  ASSERT_TRUE(m.ok()) << m.message();
  ASSERT_EQ(m->ranks.size(), 2u);
  EXPECT_EQ(m->ranks[1].rank, 1);
  EXPECT_EQ(m->ranks[1].host, "hostB");
  EXPECT_EQ(m->ranks[0].world_size, 2);
  EXPECT_EQ(m->ranks[0].source, "synthetic");
  ASSERT_EQ(m->ops.size(), 4u);
  ASSERT_EQ(m->streams.size(), 4u);
  EXPECT_EQ(m->str(m->streams[0].name), "compute");
  // The kernel and the all-reduce are joined to their launches by correlation id.
  const Index gemm = m->streams[0].first_op;
  EXPECT_EQ(m->str(m->ops.name[gemm]), "gemm");
  ASSERT_NE(m->launchOf(gemm), kNone);
  EXPECT_EQ(m->str(m->api_calls.name[m->launchOf(gemm)]), "cudaLaunchKernel");
  // Collectives joined by correlation and matched across ranks.
  ASSERT_EQ(m->collectives.size(), 2u);
  ASSERT_EQ(m->matches.size(), 1u);
  EXPECT_TRUE(m->matches.complete(0));
  EXPECT_EQ(m->collectives.count[0], 1000);
  EXPECT_EQ(m->collectives.dtype[0], trace::DataType::Float32);
  // Host syncs with their call and stream.
  ASSERT_EQ(m->host_syncs.size(), 2u);
  EXPECT_EQ(m->host_syncs.sync_kind[0], trace::SyncKind::Stream);
  EXPECT_EQ(m->str(m->api_calls.name[m->host_syncs.api_call[0]]), "cudaStreamSynchronize");
  EXPECT_EQ(m->str(m->streams[m->host_syncs.stream[0]].name), "nccl");
  ASSERT_EQ(m->ranges.size(), 2u);
  EXPECT_EQ(m->str(m->ranges.name[0]), "ProfilerStep#1");
  // Store diagnostics are kept, with the store's name.
  ASSERT_GE(m->diagnostics.size(), 2u);
  EXPECT_EQ(m->diagnostics[0].message, "records dropped");
  EXPECT_NE(m->diagnostics[0].source.find("rank-0.sqlite"), std::string::npos);
  // Clocks: B moved by its offset minus the 2us error; both all-reduces now end together.
  EXPECT_TRUE(m->clock.refined);
  EXPECT_EQ(m->clock.hosts[1].refinement_ns, -2 * kUs);
  EXPECT_EQ(m->ranks[1].to_aligned_ns, 5'000'000 - 2 * kUs);
  const Index ar0 = m->collectives.op[0], ar1 = m->collectives.op[1];
  EXPECT_EQ(m->ops.end[ar0], m->ops.end[ar1]);
  EXPECT_EQ(m->ops.end[ar0], 1'000'000 + 100 * kUs);
  EXPECT_EQ(m->clock.residual_before_median_ns, 2 * kUs);
  EXPECT_EQ(m->clock.residual_median_ns, 0);
}

// A stream whose ops were stored out of time order: the model holds them by (start, end), and
// two ops with equal times keep the order they were stored in.
TEST(LoadRun, OrdersAStreamStoredOutOfTimeOrder) {
  ScratchDir dir;
  {
    trace::Catalog catalog;
    auto w = trace::StoreWriter::create(dir.path(), {"hostA", 100, 0, "synthetic"}, catalog);
    ASSERT_TRUE(w.ok()) << w.message();
    const trace::StreamId stream = catalog.registerStream({0, 0x10, std::nullopt, std::nullopt, catalog.intern("compute")});
    const std::pair<const char*, std::int64_t> stored[] = {{"d", 30}, {"a", 0}, {"c1", 20}, {"c2", 20}, {"b", 10}};
    for (const auto& [name, start] : stored) {
      trace::OpRow r;
      r.kind = trace::OpKind::Kernel;
      r.device_id = 0;
      r.stream_id = stream;
      r.name_id = catalog.intern(name);
      r.start_ns = start * kUs;
      r.end_ns = start * kUs + 5 * kUs;
      ASSERT_TRUE((*w)->writeOp(r).ok());
    }
    ASSERT_TRUE((*w)->close().ok());
  }
  auto m = loadRun(dir.path());
  ASSERT_TRUE(m.ok()) << m.message();
  ASSERT_EQ(m->ops.size(), 5u);
  std::vector<std::string> names;
  for (Index op = 0; op < m->ops.size(); ++op) names.emplace_back(m->str(m->ops.name[op]));
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c1", "c2", "d"}));
}

TEST(LoadRun, ReportsProgressOverAllRows) {
  ScratchDir dir;
  writeRankStore(dir.path(), 0, "h", 0, 60 * kUs, 100 * kUs);
  std::size_t last_done = 0, total = 0, calls = 0;
  LoadOptions options;
  options.progress = [&](std::string_view, std::size_t done, std::size_t t) {
    ++calls;
    EXPECT_GE(done, last_done);
    last_done = done;
    total = t;
  };
  auto m = loadRun(dir.path(), options);
  ASSERT_TRUE(m.ok());
  EXPECT_GT(calls, 0u);
  EXPECT_EQ(total, 6u);  // 3 ops + 3 API calls
  EXPECT_EQ(last_done, total);
}

TEST(LoadRun, MissingOrEmptyDirectory) {
  ScratchDir dir;
  auto missing = loadRun(dir / "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("nope"), std::string::npos) << missing.message();
  auto empty = loadRun(dir.path());
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.message().find("holds no run store"), std::string::npos) << empty.message();
}

TEST(LoadRun, FileThatIsNotAStore) {
  ScratchDir dir;
  testing::writeFile(dir / "rank-0.sqlite", "this is not a database at all, just text");
  auto m = loadRun(dir.path());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.message().find("not a SQLite database"), std::string::npos) << m.message();
}

// Cut in half, the store keeps its first pages: those of the API calls and ops (created first),
// not the later ones of its NVTX ranges, which the analysis warns of (torn_store_test.cpp
// checks the rows kept on stores of many pages).
TEST(LoadRun, TruncatedStoreLoadsWhatComesBeforeTheTear) {
  ScratchDir dir;
  writeRankStore(dir.path(), 0, "h", 0, 60 * kUs, 100 * kUs);
  const auto file = dir / "rank-0.sqlite";
  const std::string bytes = testing::readFile(file);
  ASSERT_GT(bytes.size(), 8192u);
  testing::writeFile(file, bytes.substr(0, bytes.size() / 2));
  auto m = loadRun(dir.path());
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->ops.size(), 2u);
  EXPECT_EQ(m->api_calls.size(), 3u);
  EXPECT_EQ(m->ranges.size(), 0u);
  const std::string torn = "the store is torn (the file has " + std::to_string(bytes.size() / 2) + " of the " +
                           std::to_string(bytes.size()) +
                           " bytes its header says): its nvtx_ranges table could be read only up to its first unreadable "
                           "row, so the 0 rows before it were kept and the rows written after it are lost";
  EXPECT_TRUE(std::any_of(m->diagnostics.begin(), m->diagnostics.end(), [&](const trace::DiagnosticRow& d) {
    return d.message == torn && d.source == "rank-0.sqlite";
  }));
}

TEST(LoadRun, UnknownSchemaMajorVersion) {
  ScratchDir dir;
  writeRankStore(dir.path(), 0, "h", 0, 60 * kUs, 100 * kUs);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "rank-0.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '9.0' WHERE key = 'schema_version'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto m = loadRun(dir.path());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.message().find("9.0"), std::string::npos) << m.message();
}

// A damaged store whose ids point far beyond its tables (a stream numbered 4 000 000 000, names
// beyond the strings table, as flipped bytes leave them) loads in bounded memory: the stream is
// dropped and its ops skipped, the names read as empty, and one diagnostic counts the damage.
// Before, each such id sized a table of gigabytes.
TEST(LoadRun, IdsBeyondTheTablesAreDroppedNotAllocated) {
  ScratchDir dir;
  writeRankStore(dir.path(), 0, "h", 0, 60 * kUs, 100 * kUs);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "rank-0.sqlite").c_str(), &db), SQLITE_OK);
  // The calls' and ranges' names are packed (a base per page, and each row's difference from
  // it): a damaged base moves the names of the whole page, here all three calls.
  for (const char* damage : {"UPDATE streams SET id = 4000000000 WHERE handle = 16",
                             "UPDATE api_calls_pages SET name_id_base = 4294967234",
                             "UPDATE nvtx_ranges_pages SET name_id_base = 4294967280"})
    ASSERT_EQ(sqlite3_exec(db, damage, nullptr, nullptr, nullptr), SQLITE_OK) << damage;
  sqlite3_close(db);
  auto m = loadRun(dir.path());
  ASSERT_TRUE(m.ok()) << m.message();
  ASSERT_EQ(m->streams.size(), 1u);
  EXPECT_EQ(m->str(m->streams[0].name), "nccl");
  ASSERT_EQ(m->ops.size(), 1u);  // the gemm's stream is gone; the all-reduce stays
  EXPECT_EQ(m->str(m->ops.name[0]), "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  ASSERT_EQ(m->api_calls.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(m->str(m->api_calls.name[i]), "");
  ASSERT_EQ(m->ranges.size(), 1u);
  EXPECT_EQ(m->str(m->ranges.name[0]), "");
  const std::string damaged(trace::diagnostics::entry(trace::diagnostics::Key::load_rows_damaged).sentence);
  const auto found = std::find_if(m->diagnostics.begin(), m->diagnostics.end(),
                                  [&](const trace::DiagnosticRow& d) { return d.message == damaged; });
  ASSERT_NE(found, m->diagnostics.end());
  EXPECT_EQ(found->count, 5);  // the stream, three calls' names, the range's name
  EXPECT_EQ(found->source, "rank-0.sqlite");
}

}  // namespace
}  // namespace syncopate::analyzer
