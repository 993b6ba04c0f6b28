// A store torn at its end (its file cut at a page boundary or inside a page, or its last pages
// overwritten) loads everything written before the tear, with one diagnostic per torn table.
// The rows expected are SQLite's own account of the intact store: its dbstat table lists the
// pages of each table's pages (packed_pages: a row per page of rows) in tree order with their
// cells and each cell's overflow pages, and a scan of the torn store stops at the first cell
// stored on a page past the tear.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "scratch_dir.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/trace/catalog.hpp"
#include "syncopate/trace/diagnostics.hpp"
#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/writer.hpp"

namespace syncopate::analyzer {
namespace {

using testing::ScratchDir;

constexpr std::int64_t kRows = 150000;  // API calls, and as many ops

// One stream, one thread, kRows launches and their kernels, flushed every 500 of each so that
// the pages of the two tables alternate through the file, as in a recording.
std::filesystem::path writeStore(const std::filesystem::path& dir) {
  trace::Catalog catalog;
  auto w = trace::StoreWriter::create(dir, {"h", 1, 0, "synthetic"}, catalog);
  EXPECT_TRUE(w.ok()) << w.message();
  const trace::StreamId stream = catalog.registerStream({0, 7, std::nullopt, std::nullopt, catalog.intern("compute")});
  const trace::ThreadId thread = catalog.registerThread({42, catalog.intern("main")});
  const trace::StringId launch = catalog.intern("cudaLaunchKernel"), kernel = catalog.intern("gemm");
  for (std::int64_t i = 1; i <= kRows; ++i) {
    trace::ApiCallRow call;
    call.thread_id = thread;
    call.name_id = launch;
    call.start_ns = 1000 * i;
    call.end_ns = 1000 * i + 100;
    call.correlation_id = i;
    EXPECT_TRUE((*w)->writeApiCall(call).ok());
    trace::OpRow op;
    op.kind = trace::OpKind::Kernel;
    op.device_id = 0;
    op.stream_id = stream;
    op.name_id = kernel;
    op.start_ns = 1000 * i + 200;
    op.end_ns = 1000 * i + 900;
    op.correlation_id = i;
    EXPECT_TRUE((*w)->writeOp(op).ok());
    if (i % 500 == 0) {
      EXPECT_TRUE((*w)->flush().ok());
    }
  }
  EXPECT_TRUE((*w)->close().ok());
  return dir / "rank-0.sqlite";
}

// A page of the tree of a table of pages, in tree order: an interior page (no cells of its
// own), or a leaf whose cells each need their overflow pages too.
struct Page {
  std::int64_t number;
  bool leaf;
  std::vector<std::int64_t> cells;  // a leaf's cells: the highest page each is stored on
};

// SQLite's account of the intact store: its page size, and for each packed table its tree's
// pages in tree order and the rows of each of its cells (pages of rows), in order.
struct Layout {
  std::int64_t page_size = 0;
  std::vector<Page> ops, api_calls;
  std::vector<std::int64_t> ops_rows, api_calls_rows;

  explicit Layout(const std::filesystem::path& file) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &s, nullptr), SQLITE_OK);
    if (sqlite3_step(s) == SQLITE_ROW) page_size = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    // Paths: "/" the root, "/00a/" a child, "/00a/003+000001" the second overflow page of the
    // fourth cell of page "/00a/"; overflow pages come right after their leaf in path order.
    EXPECT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT name, pageno, pagetype, ncell, path FROM dbstat "
                                 "WHERE name IN ('ops_pages', 'api_calls_pages') ORDER BY name, path",
                                 -1, &s, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    while (sqlite3_step(s) == SQLITE_ROW) {
      const std::string table = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
      const std::string type = reinterpret_cast<const char*>(sqlite3_column_text(s, 2));
      const std::string path = reinterpret_cast<const char*>(sqlite3_column_text(s, 4));
      std::vector<Page>& pages = table == "ops_pages" ? ops : api_calls;
      const std::int64_t number = sqlite3_column_int64(s, 1);
      if (type == "overflow") {
        const std::size_t cell = std::stoul(path.substr(path.rfind('/') + 1, 3), nullptr, 16);
        EXPECT_TRUE(!pages.empty() && pages.back().leaf && cell < pages.back().cells.size()) << path;
        if (!pages.empty() && cell < pages.back().cells.size())
          pages.back().cells[cell] = std::max(pages.back().cells[cell], number);
      } else {
        const bool leaf = type == "leaf";
        pages.push_back({number, leaf, std::vector<std::int64_t>(leaf ? sqlite3_column_int64(s, 3) : 0, number)});
      }
    }
    sqlite3_finalize(s);
    for (auto [table, rows] : {std::pair{"ops_pages", &ops_rows}, std::pair{"api_calls_pages", &api_calls_rows}}) {
      const std::string sql = std::string("SELECT row_count FROM ") + table + " ORDER BY first_id";
      EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK);
      while (sqlite3_step(s) == SQLITE_ROW) rows->push_back(sqlite3_column_int64(s, 0));
      sqlite3_finalize(s);
    }
    sqlite3_close(db);
  }

  // The rows a scan reads before the first cell stored on a page numbered above `last_page`
  // (its leaf, an overflow page of it, or an interior page above it).
  static std::int64_t rowsUpTo(const std::vector<Page>& pages, const std::vector<std::int64_t>& cell_rows,
                               std::int64_t last_page) {
    std::int64_t rows = 0;
    std::size_t cell = 0;
    for (const Page& p : pages) {
      if (p.number > last_page) return rows;
      for (const std::int64_t highest : p.cells) {
        if (highest > last_page) return rows;
        rows += cell < cell_rows.size() ? cell_rows[cell++] : 0;
      }
    }
    return rows;
  }
};

std::int64_t rootPage(const std::filesystem::path& file, const char* table) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_schema WHERE name = ?", -1, &s, nullptr), SQLITE_OK);
  sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
  const std::int64_t page = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return page;
}

std::string tornSentence(const std::string& how, const std::string& table, std::int64_t rows) {
  return "the store is torn (" + how + "): its " + table + " table could be read only up to its first unreadable row, so the " +
         std::to_string(rows) + " rows before it were kept and the rows written after it are lost";
}

// The torn copy in `dir` reads as the rows before page `last_page`, in write order, through the
// reader and through loadRun (also from the store packed into bytes), which warns of each torn
// table.
void expectPrefix(const std::filesystem::path& dir, const Layout& layout, std::int64_t last_page, const std::string& how) {
  const std::int64_t ops = Layout::rowsUpTo(layout.ops, layout.ops_rows, last_page);
  const std::int64_t calls = Layout::rowsUpTo(layout.api_calls, layout.api_calls_rows, last_page);
  ASSERT_LT(ops + calls, 2 * kRows);  // the tear loses rows
  ASSERT_GT(ops + calls, 0);
  auto reader = trace::StoreReader::open(dir / "rank-0.sqlite", trace::TornStores::KeepRowsBefore);
  ASSERT_TRUE(reader.ok()) << reader.message();
  std::int64_t read = 0;
  bool in_order = true;
  ASSERT_TRUE(reader->forEachOp([&](const trace::OpRow& row) { in_order &= row.id == ++read; }).ok());
  EXPECT_EQ(read, ops);
  EXPECT_TRUE(in_order);  // ids 1, 2, 3...: the rows written first
  read = 0;
  ASSERT_TRUE(reader->forEachApiCall([&](const trace::ApiCallRow& row) { in_order &= row.correlation_id == ++read; }).ok());
  EXPECT_EQ(read, calls);
  EXPECT_TRUE(in_order);

  auto m = loadRun(dir);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(static_cast<std::int64_t>(m->ops.size()), ops);
  EXPECT_EQ(static_cast<std::int64_t>(m->api_calls.size()), calls);
  std::vector<std::string> torn;
  for (const trace::DiagnosticRow& d : m->diagnostics)
    if (d.message.starts_with("the store is torn")) torn.push_back(d.message);
  std::vector<std::string> expected;  // a table whose pages all come before the tear is whole
  if (calls < kRows) expected.push_back(tornSentence(how, "api_calls", calls));
  if (ops < kRows) expected.push_back(tornSentence(how, "ops", ops));
  std::sort(torn.begin(), torn.end());
  EXPECT_EQ(torn, expected);

  // Read and packed where it lies, loaded elsewhere (distributed analysis): the same rows and
  // the same sentences.
  const trace::StoreFile store{dir / "rank-0.sqlite", 0, std::nullopt};
  auto packed = loadPackedRun({store}, [&](std::size_t) { return readPackedStore(store.path); });
  ASSERT_TRUE(packed.ok()) << packed.message();
  EXPECT_EQ(packed->ops.size(), m->ops.size());
  EXPECT_EQ(packed->api_calls.size(), m->api_calls.size());
  EXPECT_EQ(packed->diagnostics, m->diagnostics);
}

std::filesystem::path tornCopy(const ScratchDir& scratch, const std::filesystem::path& intact, const std::string& name) {
  const auto dir = scratch / name;
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(intact, dir / "rank-0.sqlite");
  return dir;
}

TEST(TornStore, TruncatedAtPageBoundariesAndInsidePages) {
  ScratchDir scratch;
  const auto intact = writeStore(scratch / "intact");
  const Layout layout(intact);
  const auto size = static_cast<std::int64_t>(std::filesystem::file_size(intact));
  const std::int64_t pages = size / layout.page_size;
  ASSERT_GT(pages, 100);  // both tables span many pages
  for (const std::int64_t last_page : {pages / 4, pages / 2, pages - 1}) {
    for (const std::int64_t extra : {std::int64_t{0}, std::int64_t{100}, layout.page_size / 2}) {
      const std::int64_t cut = last_page * layout.page_size + extra;
      SCOPED_TRACE("cut at byte " + std::to_string(cut));
      const auto dir = tornCopy(scratch, intact, "cut-" + std::to_string(cut));
      std::filesystem::resize_file(dir / "rank-0.sqlite", static_cast<std::uintmax_t>(cut));
      expectPrefix(dir, layout, last_page,
                   "the file has " + std::to_string(cut) + " of the " + std::to_string(size) + " bytes its header says");
      // Read strictly, the same file is refused as before.
      auto strict = trace::StoreReader::open(dir / "rank-0.sqlite");
      EXPECT_FALSE(strict.ok());
    }
  }
}

// A page cut in half reads, past the cut, as zeros: its first cells, at the end of the page,
// would come back as rows of NULLs with rowid 0. The file is read as ending at its last whole
// page instead, so a table whose only page is cut in half reads as empty, not as one such row.
TEST(TornStore, APageCutInHalfIsNotReadAsARow) {
  ScratchDir scratch;
  const auto intact = writeStore(scratch / "intact");
  const Layout layout(intact);
  const std::int64_t streams_page = rootPage(intact, "streams");
  const auto dir = tornCopy(scratch, intact, "half-page");
  std::filesystem::resize_file(dir / "rank-0.sqlite", static_cast<std::uintmax_t>((streams_page - 1) * layout.page_size + layout.page_size / 2));
  auto reader = trace::StoreReader::open(dir / "rank-0.sqlite", trace::TornStores::KeepRowsBefore);
  ASSERT_TRUE(reader.ok()) << reader.message();
  std::int64_t streams = 0;
  ASSERT_TRUE(reader->forEachStream([&](const trace::StreamRow&) { ++streams; }).ok());
  EXPECT_EQ(streams, 0);
  ASSERT_EQ(reader->tear().tables.size(), 1u);
  EXPECT_EQ(reader->tear().tables[0].table, "streams");
  EXPECT_EQ(reader->tear().tables[0].rows_kept, 0);
}

TEST(TornStore, LastPagesOverwritten) {
  ScratchDir scratch;
  const auto intact = writeStore(scratch / "intact");
  const Layout layout(intact);
  const auto size = static_cast<std::int64_t>(std::filesystem::file_size(intact));
  const std::int64_t pages = size / layout.page_size;
  for (const char fill : {'\xA5', '\0'}) {
    for (const std::int64_t first_bad : {pages / 3, pages - 5}) {
      SCOPED_TRACE("pages " + std::to_string(first_bad) + " on overwritten with byte " + std::to_string(+fill));
      const auto dir = tornCopy(scratch, intact, "garbage-" + std::to_string(+fill) + "-" + std::to_string(first_bad));
      {
        std::fstream f(dir / "rank-0.sqlite", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp((first_bad - 1) * layout.page_size);
        const std::string garbage(static_cast<std::size_t>(size - (first_bad - 1) * layout.page_size), fill);
        f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
      }
      expectPrefix(dir, layout, first_bad - 1, "a page is damaged or missing");
    }
  }
}

TEST(TornStore, AnIntactStoreReadsWhole) {
  ScratchDir scratch;
  const auto intact = writeStore(scratch / "intact");
  auto reader = trace::StoreReader::open(intact, trace::TornStores::KeepRowsBefore);
  ASSERT_TRUE(reader.ok()) << reader.message();
  EXPECT_EQ(*reader->rowCount(trace::Table::Ops), kRows);
  EXPECT_TRUE(reader->tear().tables.empty());
  EXPECT_EQ(reader->tear().header_bytes, 0u);
  auto m = loadRun(scratch / "intact");
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(static_cast<std::int64_t>(m->ops.size()), kRows);
  EXPECT_TRUE(std::none_of(m->diagnostics.begin(), m->diagnostics.end(),
                           [](const trace::DiagnosticRow& d) { return d.message.starts_with("the store is torn"); }));
}

// A store still being written keeps its last commits in its WAL, read through the same VFS
// (its shared-memory index included): nothing of it is taken for a tear.
TEST(TornStore, AStoreBeingWrittenReadsWhole) {
  ScratchDir scratch;
  trace::Catalog catalog;
  auto w = trace::StoreWriter::create(scratch.path(), {"h", 1, 0, "synthetic"}, catalog);
  ASSERT_TRUE(w.ok()) << w.message();
  const trace::StreamId stream = catalog.registerStream({0, 7, std::nullopt, std::nullopt, catalog.intern("compute")});
  for (std::int64_t i = 1; i <= 1000; ++i) {
    trace::OpRow op;
    op.kind = trace::OpKind::Kernel;
    op.device_id = 0;
    op.stream_id = stream;
    op.name_id = catalog.intern("gemm");
    op.start_ns = 1000 * i;
    op.end_ns = 1000 * i + 500;
    ASSERT_TRUE((*w)->writeOp(op).ok());
  }
  ASSERT_TRUE((*w)->flush().ok());
  ASSERT_GT(std::filesystem::file_size(scratch / "rank-0.sqlite-wal"), 0u);
  auto reader = trace::StoreReader::open(scratch / "rank-0.sqlite", trace::TornStores::KeepRowsBefore);
  ASSERT_TRUE(reader.ok()) << reader.message();
  EXPECT_EQ(*reader->rowCount(trace::Table::Ops), 1000);
  EXPECT_TRUE(reader->tear().tables.empty());
  auto m = loadRun(scratch.path());
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->ops.size(), 1000u);
  EXPECT_TRUE(std::none_of(m->diagnostics.begin(), m->diagnostics.end(),
                           [](const trace::DiagnosticRow& d) { return d.message.starts_with("the store is torn"); }));
}

// Torn before its first GPU op, a store has nothing to analyse: refused with a sentence.
TEST(TornStore, TornBeforeItsFirstOpIsRefused) {
  ScratchDir scratch;
  const auto intact = writeStore(scratch / "intact");
  const Layout layout(intact);
  const std::int64_t ops_page = rootPage(intact, "ops_pages");  // the table that holds the ops
  const auto dir = tornCopy(scratch, intact, "no-ops");
  const std::int64_t cut = (ops_page - 1) * layout.page_size;
  std::filesystem::resize_file(dir / "rank-0.sqlite", static_cast<std::uintmax_t>(cut));
  auto m = loadRun(dir);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.message(), (dir / "rank-0.sqlite").string() + " is torn before its first GPU op (the file has " + std::to_string(cut) +
                             " of the " + std::to_string(std::filesystem::file_size(intact)) +
                             " bytes its header says): its ops table cannot be read, so nothing of it can be analysed");
}

// Torn before its meta table, a store says nothing of what it is: refused with a sentence.
TEST(TornStore, TornBeforeItsMetaTableIsRefused) {
  ScratchDir scratch;
  const auto intact = writeStore(scratch / "intact");
  const Layout layout(intact);
  const auto dir = tornCopy(scratch, intact, "one-page");
  std::filesystem::resize_file(dir / "rank-0.sqlite", static_cast<std::uintmax_t>(layout.page_size));
  auto m = loadRun(dir);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.message().find("rank-0.sqlite is torn before its meta table could be read, so it cannot be read at all (the "
                             "file has " +
                             std::to_string(layout.page_size) + " of the "),
            std::string::npos)
      << m.message();
}

}  // namespace
}  // namespace syncopate::analyzer
