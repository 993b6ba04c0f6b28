// Whatever is handed to the reader, it answers with a Status whose sentence names the file
// and the problem: missing, a directory, empty, not SQLite, SQLite but not ours, a schema of
// another major version, truncated, damaged.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <vector>

#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/writer.hpp"
#include "temp_dir.hpp"

namespace syncopate::trace {
namespace {

using testing::TempDir;

void writeBytes(const std::filesystem::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary) << bytes;
}

void sql(const std::filesystem::path& file, const char* statement) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, statement, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// A closed store (no WAL) with enough ops to span many pages.
std::filesystem::path makeStore(const TempDir& dir, int ops = 20000) {
  Catalog catalog;
  const StreamId stream = catalog.registerStream({0, 0, std::nullopt, std::nullopt, kNoString});
  const ShapeId shape = catalog.internShape({catalog.intern("k"), {}, {}});
  auto writer = StoreWriter::create(dir.path(), {"h", 1, 0, "record"}, catalog);
  EXPECT_TRUE(writer.ok()) << writer.message();
  std::vector<Record> records;
  for (int i = 0; i < ops; ++i) records.push_back(OpRecord::launch(OpKind::Kernel, stream, i + 1, shape, i, i + 1));
  EXPECT_TRUE((*writer)->append(kNoThread, records).ok());
  EXPECT_TRUE((*writer)->close().ok());
  return dir / "rank-0.sqlite";
}

void expectRefusal(const std::filesystem::path& file, StatusCode code, const std::string& phrase) {
  auto reader = StoreReader::open(file);
  ASSERT_FALSE(reader.ok()) << file;
  EXPECT_EQ(reader.code(), code) << reader.message();
  EXPECT_NE(reader.message().find(file.string()), std::string::npos) << reader.message();
  EXPECT_NE(reader.message().find(phrase), std::string::npos) << reader.message();
}

TEST(ReaderErrors, MissingFileOrDirectory) {
  TempDir dir;
  expectRefusal(dir / "rank-9.sqlite", StatusCode::NotFound, "no such file");
  expectRefusal(dir.path(), StatusCode::InvalidArgument, "is a directory");
}

TEST(ReaderErrors, NotADatabase) {
  TempDir dir;
  writeBytes(dir / "empty.sqlite", "");
  expectRefusal(dir / "empty.sqlite", StatusCode::NotAStore, "is empty");
  writeBytes(dir / "text.sqlite", std::string(4096, 'x'));
  expectRefusal(dir / "text.sqlite", StatusCode::NotAStore, "not a SQLite database");
  writeBytes(dir / "json.sqlite", "{\"traceEvents\": []}");
  expectRefusal(dir / "json.sqlite", StatusCode::NotAStore, "not a SQLite database");
}

TEST(ReaderErrors, ASqliteDatabaseThatIsNotAStore) {
  TempDir dir;
  sql(dir / "nsys.sqlite", "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER);");
  expectRefusal(dir / "nsys.sqlite", StatusCode::NotAStore, "not a Syncopate store (application_id 0x00000000");

  // Our application id but no meta table (or no schema_version in it).
  sql(dir / "no-meta.sqlite", "PRAGMA application_id=1398361667; CREATE TABLE t(x);");
  expectRefusal(dir / "no-meta.sqlite", StatusCode::NotAStore, "has no meta table");
  sql(dir / "no-version.sqlite", "PRAGMA application_id=1398361667; CREATE TABLE meta(key TEXT, value TEXT);");
  expectRefusal(dir / "no-version.sqlite", StatusCode::NotAStore, "no meta.schema_version");
}

TEST(ReaderErrors, UnknownMajorVersionsAreRefusedNamingBoth) {
  TempDir dir;
  const auto file = makeStore(dir, 10);
  sql(file, "UPDATE meta SET value='3.3' WHERE key='schema_version'");
  expectRefusal(file, StatusCode::UnsupportedVersion, "has store schema 3.3, but this syncopate");
  expectRefusal(file, StatusCode::UnsupportedVersion, "reads schema 1.x to 2.x only; read it with a newer syncopate");

  sql(file, "UPDATE meta SET value='0.9' WHERE key='schema_version'");
  expectRefusal(file, StatusCode::UnsupportedVersion, "written by an older syncopate");

  sql(file, "UPDATE meta SET value='one' WHERE key='schema_version'");
  expectRefusal(file, StatusCode::Corrupt, "unreadable schema_version 'one'");
}

TEST(ReaderErrors, NewerMinorVersionsAreRead) {
  TempDir dir;
  const auto file = makeStore(dir, 10);
  sql(file, "UPDATE meta SET value='2.7' WHERE key='schema_version'; CREATE TABLE future(x);");
  auto reader = StoreReader::open(file);
  ASSERT_TRUE(reader.ok()) << reader.message();
  EXPECT_EQ(reader->schemaVersion(), (SchemaVersion{2, 7}));
  EXPECT_EQ(*reader->rowCount(Table::Ops), 10);
}

TEST(ReaderErrors, TruncatedFiles) {
  TempDir dir;
  const auto file = makeStore(dir);
  const auto size = std::filesystem::file_size(file);
  std::filesystem::resize_file(file, size / 2);
  expectRefusal(file, StatusCode::Corrupt, "is truncated: its header says " + std::to_string(size));

  std::filesystem::resize_file(file, 40);
  expectRefusal(file, StatusCode::Corrupt, "is truncated: 40 bytes");
  std::filesystem::resize_file(file, 10);  // part of the magic string only
  expectRefusal(file, StatusCode::Corrupt, "is truncated: 10 bytes");
}

TEST(ReaderErrors, DamagedPagesSurfaceAsCorruptFromTheScan) {
  TempDir dir;
  const auto file = makeStore(dir, 400000);  // ops packed: enough of them to fill most of the file
  const auto size = std::filesystem::file_size(file);
  {
    // Overwrite the second half of the file (ops pages) with garbage, keeping its size.
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    const std::string garbage(size - size / 2, '\xA5');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  auto reader = StoreReader::open(file);
  ASSERT_TRUE(reader.ok()) << reader.message();  // the header and meta are intact
  std::int64_t seen = 0;
  const Status scan = reader->forEachOp([&](const OpRow&) { ++seen; });
  EXPECT_EQ(scan.code(), StatusCode::Corrupt) << scan.message();
  EXPECT_NE(scan.message().find("damaged or truncated"), std::string::npos) << scan.message();
  EXPECT_LT(seen, 400000);
  const Status check = reader->checkIntegrity();
  EXPECT_EQ(check.code(), StatusCode::Corrupt) << check.message();
}

TEST(ReaderErrors, ADamagedHeaderPage) {
  TempDir dir;
  const auto file = makeStore(dir, 10);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);  // just after the header: page 1's b-tree header of sqlite_schema
    const std::string garbage(200, '\x5A');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  auto reader = StoreReader::open(file);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.code(), StatusCode::Corrupt) << reader.message();
}

}  // namespace
}  // namespace syncopate::trace
