// The NCCL profiler plugin's records (schema 1.1): they become `nccl_ops` and
// `nccl_kernel_channels` rows exactly, a kernel channel's start and stop meeting in one row in
// whichever order they arrive; and a store written before (schema 1.0, without these tables)
// still opens and reads them as empty.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/writer.hpp"
#include "temp_dir.hpp"

namespace syncopate::trace {
namespace {

using testing::TempDir;

struct Written {
  std::filesystem::path file;
  StringId all_reduce = kNoString, send = kNoString, ring = kNoString, ll = kNoString;
};

Written writeStore(const TempDir& dir) {
  Catalog catalog;
  Written w;
  w.all_reduce = catalog.intern("AllReduce");
  w.send = catalog.intern("Send");
  w.ring = catalog.intern("RING");
  w.ll = catalog.intern("LL");
  const StreamId stream = catalog.registerStream({0, 0, std::nullopt, std::nullopt, kNoString});
  const ShapeId shape = catalog.internShape({catalog.intern("ncclAllReduce"), {}, {}});
  auto writer = StoreWriter::create(dir.path(), {"h", 1, 0, "record"}, catalog);
  EXPECT_TRUE(writer.ok()) << writer.message();

  NcclOpRecord collective;
  collective.flags = NcclOpRecord::kHasSeq;
  collective.channels = 2;
  collective.warps = 16;
  collective.correlation_id = 7;
  collective.func_id = w.all_reduce;
  collective.algorithm_id = w.ring;
  collective.protocol_id = w.ll;
  collective.nccl_seq = 41;
  NcclOpRecord send;
  send.channels = 1;
  send.correlation_id = 8;
  send.func_id = w.send;
  const auto edge = [](std::uint8_t which, std::uint32_t correlation, std::uint8_t channel, std::uint64_t timer) {
    NcclKernelChannelRecord r;
    r.edge = which;
    r.correlation_id = correlation;
    r.channel = channel;
    r.timer = timer;
    return r;
  };
  constexpr auto kStart = NcclKernelChannelRecord::kStart;
  constexpr auto kStop = NcclKernelChannelRecord::kStop;
  const std::vector<Record> first = {OpRecord::launch(OpKind::Collective, stream, 7, shape, 1000, 2000), collective, send,
                                     edge(kStart, 7, 0, 1000), edge(kStop, 7, 1, 1990)};
  EXPECT_TRUE((*writer)->append(kNoThread, first).ok());
  EXPECT_TRUE((*writer)->flush().ok());
  // The other halves come in a later batch (another thread's ring), one of them stop first.
  const std::vector<Record> second = {edge(kStop, 7, 0, 2000), edge(kStart, 7, 1, 1010), edge(kStart, 8, 0, 3000)};
  EXPECT_TRUE((*writer)->append(kNoThread, second).ok());
  EXPECT_TRUE((*writer)->close().ok());
  w.file = dir / "rank-0.sqlite";
  return w;
}

TEST(NcclProfilerRows, RecordsBecomeRowsExactly) {
  TempDir dir;
  const Written w = writeStore(dir);
  auto reader = StoreReader::open(w.file);
  ASSERT_TRUE(reader.ok()) << reader.message();
  EXPECT_EQ(reader->schemaVersion(), kSchemaVersion);
  std::vector<NcclOpRow> ops;
  ASSERT_TRUE(reader->forEachNcclOp([&](const NcclOpRow& row) { ops.push_back(row); }).ok());
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0], (NcclOpRow{7, w.all_reduce, 41, w.ring, w.ll, 2, 16}));
  EXPECT_EQ(ops[1], (NcclOpRow{8, w.send, std::nullopt, std::nullopt, std::nullopt, 1, 0}));
  EXPECT_EQ(reader->string(ops[0].algorithm_id.value()), "RING");

  std::vector<NcclKernelChannelRow> channels;
  ASSERT_TRUE(reader->forEachNcclKernelChannel([&](const NcclKernelChannelRow& row) { channels.push_back(row); }).ok());
  std::sort(channels.begin(), channels.end(),
            [](const auto& a, const auto& b) { return std::tie(a.correlation_id, a.channel) < std::tie(b.correlation_id, b.channel); });
  ASSERT_EQ(channels.size(), 3u);
  EXPECT_EQ(channels[0], (NcclKernelChannelRow{7, 0, 1000, 2000}));
  EXPECT_EQ(channels[1], (NcclKernelChannelRow{7, 1, 1010, 1990}));
  EXPECT_EQ(channels[2], (NcclKernelChannelRow{8, 0, 3000, std::nullopt}));  // never stopped: NULL, not 0
  EXPECT_EQ(reader->rowCount(Table::NcclKernelChannels).value(), 3);
}

// What a 1.0 store is: the same tables but these two, every row a SQLite row (made here from
// the views over the packed pages), and the version saying so.
TEST(NcclProfilerRows, AStoreOfSchema10StillReadsWithoutThem) {
  TempDir dir;
  const Written w = writeStore(dir);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(w.file.c_str(), &db), SQLITE_OK);
  std::string unpack;
  for (const char* table : {"api_calls", "ops", "op_args", "nvtx_ranges"}) {
    const std::string t = table;
    unpack += "CREATE TABLE " + t + "_rows AS SELECT * FROM " + t + "; DROP VIEW " + t + "; DROP TABLE " + t +
              "_pages; ALTER TABLE " + t + "_rows RENAME TO " + t + "; ";
  }
  ASSERT_EQ(sqlite3_exec(db,
                         (unpack + "DROP TABLE nccl_ops; DROP TABLE nccl_kernel_channels; "
                                   "UPDATE meta SET value='1.0' WHERE key='schema_version';")
                             .c_str(),
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);

  auto reader = StoreReader::open(w.file);
  ASSERT_TRUE(reader.ok()) << reader.message();
  EXPECT_EQ(reader->schemaVersion(), (SchemaVersion{1, 0}));
  int rows = 0;
  EXPECT_TRUE(reader->forEachNcclOp([&](const NcclOpRow&) { ++rows; }).ok());
  EXPECT_TRUE(reader->forEachNcclKernelChannel([&](const NcclKernelChannelRow&) { ++rows; }).ok());
  EXPECT_EQ(rows, 0);
  EXPECT_EQ(reader->rowCount(Table::NcclOps).value(), 0);
  EXPECT_EQ(reader->rowCount(Table::NcclKernelChannels).value(), 0);
  EXPECT_EQ(reader->rowCount(Table::Ops).value(), 1);  // the rest as it was
}

}  // namespace
}  // namespace syncopate::trace
