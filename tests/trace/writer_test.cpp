#include "syncopate/trace/writer.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <unistd.h>
#include <vector>

#include "syncopate/trace/clock.hpp"
#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/run_dir.hpp"
#include "temp_dir.hpp"

namespace syncopate::trace {
namespace {

using testing::TempDir;

std::int64_t count(const std::filesystem::path& file, Table table) {
  auto reader = StoreReader::open(file);
  EXPECT_TRUE(reader.ok()) << reader.message();
  if (!reader.ok()) return -1;
  auto n = reader->rowCount(table);
  EXPECT_TRUE(n.ok()) << n.message();
  return n.ok() ? *n : -1;
}

std::map<std::string, std::int64_t> counters(const StoreReader& reader) {
  std::map<std::string, std::int64_t> out;
  EXPECT_TRUE(reader.forEachCounter([&](const CounterRow& c) { out[c.name] = c.value; }).ok());
  return out;
}

std::vector<DiagnosticRow> diagnostics(const StoreReader& reader) {
  std::vector<DiagnosticRow> out;
  EXPECT_TRUE(reader.forEachDiagnostic([&](const DiagnosticRow& d) { out.push_back(d); }).ok());
  return out;
}

Record kernel(StreamId stream, std::uint32_t correlation, ShapeId shape, std::int64_t t) {
  return OpRecord::launch(OpKind::Kernel, stream, correlation, shape, t, t + 10);
}

class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stream = catalog.registerStream({0, 0, std::nullopt, std::nullopt, kNoString});
    shape = catalog.internShape({catalog.intern("k"), {1, 1, 1}, {32, 1, 1}});
  }
  Catalog catalog;
  TempDir dir;
  StreamId stream{};
  ShapeId shape{};
};

TEST_F(WriterTest, CreatesAnIdentifiedStoreAtOnce) {
  const std::int64_t before = monotonicNs();
  auto writer = StoreWriter::create(dir.path(), {"", 0, std::nullopt, "record"}, catalog);
  ASSERT_TRUE(writer.ok()) << writer.message();
  const auto file = dir / pidStoreName(::getpid());
  EXPECT_EQ((*writer)->path(), file);

  // Readable before any flush: identity and schema are committed by create().
  auto reader = StoreReader::open(file);
  ASSERT_TRUE(reader.ok()) << reader.message();
  EXPECT_EQ(reader->schemaVersion(), kSchemaVersion);
  EXPECT_EQ(reader->metaValue("schema_version"), toString(kSchemaVersion));
  EXPECT_EQ(reader->metaValue("tool_version"), toolVersion());
  EXPECT_EQ(reader->metaValue("clock"), "CLOCK_MONOTONIC");
  EXPECT_EQ(reader->metaValue("rank"), "-1");
  EXPECT_FALSE(reader->rank().has_value());
  EXPECT_EQ(reader->pid(), ::getpid());
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_EQ(reader->metaValue("host"), host);
  const std::int64_t start = std::stoll(std::string(*reader->metaValue("start_ns")));
  EXPECT_GE(start, before);
  EXPECT_LE(start, monotonicNs());
  // The realtime offset is what the clocks say now, within a generous scheduling margin.
  EXPECT_NEAR(static_cast<double>(reader->realtimeOffsetNs()), static_cast<double>(realtimeOffsetNs()), 5e7);
  EXPECT_FALSE(reader->metaValue("end_ns").has_value());

  ASSERT_TRUE((*writer)->close().ok());
  auto closed = StoreReader::open(file);
  ASSERT_TRUE(closed.ok());
  EXPECT_GE(std::stoll(std::string(*closed->metaValue("end_ns"))), start);
}

TEST_F(WriterTest, RowsBecomeVisibleAtFlush) {
  auto writer = StoreWriter::createFile(dir / "s.sqlite", {}, catalog);
  ASSERT_TRUE(writer.ok());
  const std::vector<Record> batch = {kernel(stream, 1, shape, 0), kernel(stream, 2, shape, 20)};
  ASSERT_TRUE((*writer)->append(kNoThread, batch).ok());
  EXPECT_EQ(count(dir / "s.sqlite", Table::Ops), 0);
  ASSERT_TRUE((*writer)->flush().ok());
  EXPECT_EQ(count(dir / "s.sqlite", Table::Ops), 2);
  EXPECT_EQ((*writer)->stats().rows_written, 2u);
  EXPECT_EQ((*writer)->stats().flushes, 2u);  // creation's and this one
  // New catalog entries arrive with the next flush.
  const StringId late = catalog.intern("late name");
  ASSERT_TRUE((*writer)->flush().ok());
  auto reader = StoreReader::open(dir / "s.sqlite");
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->string(late), "late name");
}

TEST_F(WriterTest, CountersAndDiagnostics) {
  auto writer = StoreWriter::createFile(dir / "s.sqlite", {}, catalog);
  ASSERT_TRUE(writer.ok());
  StoreWriter& w = **writer;
  ASSERT_TRUE(w.setCounter("records_dropped.thread-7", 5).ok());
  ASSERT_TRUE(w.setCounter("records_dropped.thread-7", 9).ok());
  ASSERT_TRUE(w.addCounter("attach_cycles", 2).ok());
  ASSERT_TRUE(w.addCounter("attach_cycles", 3).ok());
  ASSERT_TRUE(w.addDiagnostic(Severity::Warning, "collector", "CUPTI was busy; using CUDA events", 50).ok());
  ASSERT_TRUE(w.addDiagnostic(Severity::Warning, "collector", "CUPTI was busy; using CUDA events", 40).ok());
  ASSERT_TRUE(w.addDiagnostic(Severity::Info, "collector", "armed").ok());
  ASSERT_TRUE(w.countDiagnostic(Severity::Info, "import", "flow events not stored", 1234).ok());
  ASSERT_TRUE(w.countDiagnostic(Severity::Info, "import", "flow events not stored", 6, 7).ok());
  EXPECT_EQ(w.countDiagnostic(Severity::Info, "import", "x", -1).code(), StatusCode::InvalidArgument);
  ASSERT_TRUE(w.setMeta("backend", "events").ok());
  ASSERT_TRUE(w.close().ok());

  auto reader = StoreReader::open(dir / "s.sqlite");
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(counters(*reader),
            (std::map<std::string, std::int64_t>{{"attach_cycles", 5}, {"records_dropped.thread-7", 9}}));
  const auto d = diagnostics(*reader);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0], (DiagnosticRow{1, Severity::Warning, "collector", "CUPTI was busy; using CUDA events", 2, 40}));
  EXPECT_EQ(d[1], (DiagnosticRow{2, Severity::Info, "collector", "armed", 1, std::nullopt}));
  EXPECT_EQ(d[2], (DiagnosticRow{3, Severity::Info, "import", "flow events not stored", 1240, 7}));
  EXPECT_EQ(reader->metaValue("backend"), "events");
}

TEST_F(WriterTest, CollectiveSequenceNumbersAreExtendedPastThirtyTwoBits) {
  const CommId comm = catalog.registerCommunicator({42, 0, 2, 0, 0x1, std::nullopt, std::nullopt});
  auto writer = StoreWriter::createFile(dir / "s.sqlite", {}, catalog);
  ASSERT_TRUE(writer.ok());
  std::vector<Record> records;
  std::uint32_t correlation = 1;
  // Around the wrap, with one number arriving late (0xFFFFFFFF after 0).
  for (const std::uint32_t low : {0xFFFFFFFDu, 0xFFFFFFFEu, 0u, 0xFFFFFFFFu, 1u, 2u}) {
    CollectiveRecord c;
    c.coll_type = CollType::AllReduce;
    c.correlation_id = correlation++;
    c.comm = comm;
    c.seq = low;
    records.push_back(c);
  }
  ASSERT_TRUE((*writer)->append(kNoThread, records).ok());
  ASSERT_TRUE((*writer)->close().ok());
  auto reader = StoreReader::open(dir / "s.sqlite");
  ASSERT_TRUE(reader.ok());
  std::vector<std::uint64_t> seqs;
  ASSERT_TRUE(reader->forEachCollective([&](const CollectiveRow& row) { seqs.push_back(row.seq); }).ok());
  const std::uint64_t wrap = std::uint64_t{1} << 32;
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{wrap - 3, wrap - 2, wrap, wrap - 1, wrap + 1, wrap + 2}));
}

// A free may be drained (from another thread's buffer) a flush before its allocation.
TEST_F(WriterTest, FreesMeetTheirAllocationsAcrossBuffersAndFlushes) {
  auto writer = StoreWriter::createFile(dir / "s.sqlite", {}, catalog);
  ASSERT_TRUE(writer.ok());
  StoreWriter& w = **writer;
  AllocRecord a;
  a.address = 0x1000;
  a.bytes = 256;
  a.device = 0;
  a.time_ns = 10;
  FreeRecord f;
  f.address = 0x1000;
  f.time_ns = 20;
  AllocRecord reuse = a;  // the same address allocated again after the free
  reuse.bytes = 512;
  reuse.time_ns = 30;
  FreeRecord unmatched;
  unmatched.address = 0x9999;
  unmatched.time_ns = 25;

  ASSERT_TRUE(w.append(2, std::vector<Record>{f, unmatched}).ok());
  ASSERT_TRUE(w.flush().ok());
  ASSERT_TRUE(w.append(1, std::vector<Record>{a, reuse}).ok());
  ASSERT_TRUE(w.close().ok());

  auto reader = StoreReader::open(dir / "s.sqlite");
  ASSERT_TRUE(reader.ok());
  std::vector<AllocationRow> rows;
  ASSERT_TRUE(reader->forEachAllocation([&](const AllocationRow& r) { rows.push_back(r); }).ok());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (AllocationRow{1, 0, 0x1000, 256, AllocKind::Device, 10, 20}));
  EXPECT_EQ(rows[1], (AllocationRow{2, 0, 0x1000, 512, AllocKind::Device, 30, std::nullopt}));
  EXPECT_EQ(counters(*reader).at("frees_without_alloc"), 1);
}

TEST_F(WriterTest, UnknownReferencesAreCountedNotInvented) {
  auto writer = StoreWriter::createFile(dir / "s.sqlite", {}, catalog);
  ASSERT_TRUE(writer.ok());
  CollectiveRecord orphan;
  orphan.comm = 77;  // never registered
  orphan.correlation_id = 3;
  ApiCallRecord threadless;  // a host call drained from a buffer with no registered thread
  threadless.name_id = catalog.intern("cudaMalloc");
  const std::vector<Record> records = {kernel(999, 1, shape, 0), kernel(stream, 2, 12345, 0), orphan,
                                       OpRecord::memcpy(MemcpyKind::HostToDevice, stream, 4, OpRecord::kMaxBytes + 5, 0, 1),
                                       threadless};
  ASSERT_TRUE((*writer)->append(kNoThread, records).ok());
  ASSERT_TRUE((*writer)->close().ok());
  EXPECT_EQ((*writer)->stats().records_appended, 5u);

  auto reader = StoreReader::open(dir / "s.sqlite");
  ASSERT_TRUE(reader.ok());
  std::vector<OpRow> ops;
  ASSERT_TRUE(reader->forEachOp([&](const OpRow& op) { ops.push_back(op); }).ok());
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].stream_id, 999u);
  EXPECT_FALSE(ops[0].device_id.has_value());
  EXPECT_EQ(reader->string(ops[1].name_id), "<unknown kernel>");
  EXPECT_EQ(ops[2].bytes, static_cast<std::int64_t>(OpRecord::kMaxBytes));
  EXPECT_EQ(*reader->rowCount(Table::Collectives), 0);
  const auto c = counters(*reader);
  EXPECT_EQ(c.at("unknown_references"), 4);
  EXPECT_EQ(c.at("ops_bytes_clamped"), 1);
  EXPECT_EQ(diagnostics(*reader).size(), 2u);
}

TEST_F(WriterTest, AClosedWriterRefusesWork) {
  auto writer = StoreWriter::createFile(dir / "s.sqlite", {}, catalog);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->close().ok());
  EXPECT_TRUE((*writer)->close().ok());  // the same result again
  EXPECT_EQ((*writer)->append(kNoThread, std::vector<Record>{kernel(stream, 1, shape, 0)}).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ((*writer)->flush().code(), StatusCode::InvalidArgument);
  EXPECT_EQ((*writer)->setMeta("k", "v").code(), StatusCode::InvalidArgument);
}

TEST_F(WriterTest, NeverReplacesAnExistingStore) {
  auto first = StoreWriter::create(dir.path(), {"h", 1, 3, "record"}, catalog);
  ASSERT_TRUE(first.ok());
  auto second = StoreWriter::create(dir.path(), {"h", 2, 3, "record"}, catalog);
  EXPECT_EQ(second.code(), StatusCode::AlreadyExists);
  EXPECT_NE(second.message().find("rank-3.sqlite"), std::string::npos) << second.message();
  EXPECT_TRUE((*first)->close().ok());
}

TEST_F(WriterTest, UnwritableDirectoriesGiveAStatus) {
  // A path under a regular file cannot become a directory (for root too).
  const auto file = dir / "plain-file";
  { std::ofstream(file) << "x"; }
  auto under_file = StoreWriter::create(file / "run", {}, catalog);
  ASSERT_FALSE(under_file.ok());
  EXPECT_NE(under_file.message().find("cannot create run directory"), std::string::npos) << under_file.message();

  // sysfs refuses new entries to everyone, root included.
  auto sysfs = StoreWriter::create("/sys/kernel", {}, catalog);
  ASSERT_FALSE(sysfs.ok());
  EXPECT_TRUE(sysfs.code() == StatusCode::PermissionDenied || sysfs.code() == StatusCode::NotFound) << sysfs.message();
  EXPECT_NE(sysfs.message().find("/sys/kernel/pid-"), std::string::npos) << sysfs.message();

  if (::geteuid() != 0) {  // permission bits bind only non-root users
    const auto locked = dir / "locked";
    std::filesystem::create_directory(locked);
    std::filesystem::permissions(locked, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    auto denied = StoreWriter::create(locked, {}, catalog);
    EXPECT_EQ(denied.code(), StatusCode::PermissionDenied) << denied.message();
    std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
  }
}

}  // namespace
}  // namespace syncopate::trace
