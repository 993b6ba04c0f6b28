// The big tables' rows packed into pages (schema 2): every value comes back exactly (NULLs
// among values, columns NULL throughout a page, values spanning the whole 64-bit range, pages
// rewritten by later flushes), the views show the same rows to plain SQL, and a malformed page
// is refused with a sentence, or with KeepRowsBefore ends the table there.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/writer.hpp"
#include "read_all.hpp"
#include "temp_dir.hpp"

namespace syncopate::trace {
namespace {

using testing::readAll;
using testing::TempDir;

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// 10 000 calls and ops (more than two pages), flushed every 777 rows so that open pages are
// rewritten; columns with NULLs, extremes, and constants.
struct WrittenPages {
  std::vector<ApiCallRow> calls;
  std::vector<OpRow> ops;
  std::vector<OpArgRow> args;
  std::vector<NvtxRangeRow> ranges;
};

WrittenPages writeStore(const std::filesystem::path& file) {
  Catalog catalog;
  const ThreadId thread = catalog.registerThread({7, catalog.intern("main")});
  const StreamId stream = catalog.registerStream({0, 0x10, std::nullopt, std::nullopt, catalog.intern("compute")});
  auto writer = StoreWriter::createFile(file, {"h", 1, 0, "synthetic"}, catalog);
  EXPECT_TRUE(writer.ok()) << writer.message();
  WrittenPages w;
  for (std::int64_t i = 1; i <= 10000; ++i) {
    ApiCallRow call;
    call.id = i;
    call.thread_id = thread;
    call.name_id = catalog.intern(i % 3 == 0 ? "cudaLaunchKernel" : "cudaMemcpyAsync");
    call.start_ns = 1'000'000'000'000 + 1000 * i;
    call.end_ns = call.start_ns + (i % 17);
    if (i % 5 != 0) call.correlation_id = i;  // NULL in some rows
    call.result = i < 5000 ? std::optional<std::int64_t>(i % 2 == 0 ? kMin : kMax) : std::nullopt;
    w.calls.push_back(call);
    EXPECT_TRUE((*writer)->writeApiCall(call).ok());

    OpRow op;
    op.id = i;
    op.kind = i % 2 == 0 ? OpKind::Kernel : OpKind::Memcpy;
    op.device_id = 0;
    op.stream_id = stream;
    op.name_id = call.name_id;
    op.start_ns = -5 - i;  // negative times pack like any others
    op.end_ns = kMax - i;
    op.correlation_id = i;
    if (op.kind == OpKind::Memcpy) {
      op.bytes = i << 20;
      op.memcpy_kind = MemcpyKind::HostToDevice;
    } else {
      op.grid = Dim3{static_cast<std::uint32_t>(i), 1, 1};
      op.block = Dim3{256, 1, 1};
    }
    w.ops.push_back(op);
    EXPECT_TRUE((*writer)->writeOp(op).ok());

    if (i % 10 == 0) {
      const OpArgRow arg{i, static_cast<std::uint32_t>(i % 3), 0xFFFF'8000'0000'0000ULL + static_cast<std::uint64_t>(i)};
      w.args.push_back(arg);
      EXPECT_TRUE((*writer)->writeOpArg(arg).ok());
      NvtxRangeRow range;
      range.id = i / 10;
      range.name_id = catalog.intern("step");
      range.start_ns = i;
      range.end_ns = i + 1;
      range.depth = 0;
      w.ranges.push_back(range);
      EXPECT_TRUE((*writer)->writeNvtxRange(range).ok());
    }
    if (i % 777 == 0) {
      EXPECT_TRUE((*writer)->flush().ok());
    }
  }
  EXPECT_TRUE((*writer)->close().ok());
  return w;
}

TEST(PackedPages, EveryValueComesBack) {
  TempDir dir;
  const WrittenPages w = writeStore(dir / "s.sqlite");
  auto reader = StoreReader::open(dir / "s.sqlite");
  ASSERT_TRUE(reader.ok()) << reader.message();
  EXPECT_EQ(reader->schemaVersion(), kSchemaVersion);
  EXPECT_TRUE(readAll(*reader, &StoreReader::forEachApiCall) == w.calls);
  EXPECT_TRUE(readAll(*reader, &StoreReader::forEachOp) == w.ops);
  EXPECT_TRUE(readAll(*reader, &StoreReader::forEachOpArg) == w.args);
  EXPECT_TRUE(readAll(*reader, &StoreReader::forEachNvtxRange) == w.ranges);
  EXPECT_EQ(*reader->rowCount(Table::ApiCalls), 10000);
  EXPECT_EQ(*reader->rowCount(Table::Ops), 10000);
  EXPECT_EQ(*reader->rowCount(Table::OpArgs), 1000);
  EXPECT_EQ(*reader->rowCount(Table::NvtxRanges), 1000);
  EXPECT_TRUE(reader->checkIntegrity().ok());
}

// Runs `sql` on the store with plain SQLite and returns every value of every row (NULL as
// nullopt), in order.
std::vector<std::vector<std::optional<std::int64_t>>> query(const std::filesystem::path& file, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::vector<std::vector<std::optional<std::int64_t>>> rows;
  while (s != nullptr && sqlite3_step(s) == SQLITE_ROW) {
    auto& row = rows.emplace_back();
    for (int c = 0; c < sqlite3_column_count(s); ++c) {
      EXPECT_NE(sqlite3_column_type(s, c), SQLITE_FLOAT) << sql << " column " << c;
      row.push_back(sqlite3_column_type(s, c) == SQLITE_NULL ? std::nullopt
                                                              : std::optional<std::int64_t>(sqlite3_column_int64(s, c)));
    }
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return rows;
}

template <class T>
std::optional<std::int64_t> v(const std::optional<T>& x) {
  return x ? std::optional<std::int64_t>(static_cast<std::int64_t>(*x)) : std::nullopt;
}
template <class T>
std::optional<std::int64_t> v(const T& x) {
  return static_cast<std::int64_t>(x);
}

TEST(PackedPages, TheViewsShowTheRowsToPlainSql) {
  TempDir dir;
  const WrittenPages w = writeStore(dir / "s.sqlite");
  const auto calls = query(dir / "s.sqlite",
                           "SELECT id, thread_id, domain, name_id, start_ns, end_ns, correlation_id, result FROM api_calls");
  ASSERT_EQ(calls.size(), w.calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const ApiCallRow& c = w.calls[i];
    const std::vector<std::optional<std::int64_t>> expected{
        v(c.id), v(c.thread_id), v(c.domain), v(c.name_id), v(c.start_ns), v(c.end_ns), v(c.correlation_id), v(c.result)};
    ASSERT_EQ(calls[i], expected) << "api_calls row " << i;
  }
  const auto ops = query(dir / "s.sqlite",
                         "SELECT id, kind, start_ns, end_ns, bytes, memcpy_kind, grid_x, grid_y, block_x, event_id FROM ops");
  ASSERT_EQ(ops.size(), w.ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpRow& o = w.ops[i];
    const auto axis = [](const std::optional<Dim3>& d, std::uint32_t Dim3::*a) {
      return d ? std::optional<std::int64_t>((*d).*a) : std::nullopt;
    };
    const std::vector<std::optional<std::int64_t>> expected{
        v(o.id), v(o.kind), v(o.start_ns), v(o.end_ns), v(o.bytes), v(o.memcpy_kind),
        axis(o.grid, &Dim3::x), axis(o.grid, &Dim3::y), axis(o.block, &Dim3::x), v(o.event_id)};
    ASSERT_EQ(ops[i], expected) << "ops row " << i;
  }
  const auto args = query(dir / "s.sqlite", "SELECT correlation_id, arg_index, address FROM op_args");
  ASSERT_EQ(args.size(), w.args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::vector<std::optional<std::int64_t>> expected{v(w.args[i].correlation_id), v(w.args[i].arg_index),
                                                            v(w.args[i].address)};
    ASSERT_EQ(args[i], expected) << "op_args row " << i;
  }
  EXPECT_EQ(query(dir / "s.sqlite", "SELECT count(*) FROM nvtx_ranges WHERE depth = 0"),
            (std::vector<std::vector<std::optional<std::int64_t>>>{{1000}}));
}

void damage(const std::filesystem::path& file, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST(PackedPages, AMalformedPageIsRefusedOrEndsTheTable) {
  TempDir dir;
  writeStore(dir / "s.sqlite");
  // The second page of ops claims more rows than its columns hold.
  damage(dir / "s.sqlite", "UPDATE ops_pages SET row_count = 4095 WHERE first_id = 4097");
  {
    auto reader = StoreReader::open(dir / "s.sqlite");
    ASSERT_TRUE(reader.ok()) << reader.message();
    const Status s = reader->forEachOp([](const OpRow&) {});
    EXPECT_EQ(s.code(), StatusCode::Corrupt);
    EXPECT_NE(s.message().find("a page of ops is malformed"), std::string::npos) << s.message();
  }
  auto reader = StoreReader::open(dir / "s.sqlite", TornStores::KeepRowsBefore);
  ASSERT_TRUE(reader.ok()) << reader.message();
  std::int64_t rows = 0;
  ASSERT_TRUE(reader->forEachOp([&](const OpRow& o) { EXPECT_EQ(o.id, ++rows); }).ok());
  EXPECT_EQ(rows, 4096);  // the first page, whole
  ASSERT_EQ(reader->tear().tables.size(), 1u);
  EXPECT_EQ(reader->tear().tables[0].table, "ops");
  EXPECT_EQ(reader->tear().tables[0].rows_kept, 4096);
}

TEST(PackedPages, ARowCountBeyondAnyPageIsRefused) {
  TempDir dir;
  writeStore(dir / "s.sqlite");
  // Every column of the page made constant (width 0), so that its bytes agree with any count.
  damage(dir / "s.sqlite",
         "UPDATE op_args_pages SET row_count = 1000000000, correlation_id = x'', arg_index = x'', address = x''");
  auto reader = StoreReader::open(dir / "s.sqlite");
  ASSERT_TRUE(reader.ok()) << reader.message();
  EXPECT_EQ(reader->forEachOpArg([](const OpArgRow&) {}).code(), StatusCode::Corrupt);
  const auto count = reader->rowCount(Table::OpArgs);
  ASSERT_TRUE(count.ok());
  EXPECT_LE(*count, 4096);  // bounded by what a page may hold, not what a damaged one says
}

}  // namespace
}  // namespace syncopate::trace
