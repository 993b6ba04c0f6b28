#include "syncopate/trace/reader.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

#include "packed_pages.hpp"
#include "row_binding.hpp"
#include "sqlite_util.hpp"
#include "store_table.hpp"

namespace syncopate::trace {

namespace {

constexpr char kSqliteMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
constexpr std::size_t kHeaderSize = 100;

std::uint32_t bigEndian(const unsigned char* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

std::optional<std::int64_t> parseInt(std::string_view text) {
  std::int64_t v = 0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (err != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// What the first 100 bytes say, checked before SQLite sees the file so that the common
// mistakes get a precise sentence (SQLite would only say "file is not a database"). A file
// shorter than its header says is refused, or with KeepRowsBefore noted in `tear`.
Status checkHeader(const std::filesystem::path& file, TornStores torn, StoreTear& tear) {
  const std::string name = file.string();
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return detail::errnoStatus(errno, "cannot read " + name);
  struct stat st {};
  unsigned char header[kHeaderSize] = {};
  ssize_t got = -1;
  if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) got = ::pread(fd, header, sizeof header, 0);
  const int err = errno;
  ::close(fd);
  if (S_ISDIR(st.st_mode)) {
    return {StatusCode::InvalidArgument, name + " is a directory, not a store (a run directory's stores are its "
                                                "rank-<R>.sqlite and pid-<P>.sqlite files)"};
  }
  if (got < 0) return detail::errnoStatus(err, "cannot read " + name);
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size == 0) return {StatusCode::NotAStore, name + " is empty: it is not a Syncopate store"};
  const std::size_t compared = std::min(size, sizeof kSqliteMagic);
  if (std::memcmp(header, kSqliteMagic, compared) != 0) {
    return {StatusCode::NotAStore, name + " is not a SQLite database, so not a Syncopate store"};
  }
  if (size < kHeaderSize) {
    return {StatusCode::Corrupt,
            name + " is truncated: " + std::to_string(size) + " bytes, less than a SQLite header"};
  }
  const std::uint32_t app_id = bigEndian(header + 68, 4);
  if (app_id != static_cast<std::uint32_t>(kApplicationId)) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08X", app_id);
    return {StatusCode::NotAStore, name + " is a SQLite database but not a Syncopate store (application_id " + hex +
                                       ", a store has 0x53594E43)"};
  }
  // The page count in the header is reliable when "version-valid-for" matches the change
  // counter. A main file shorter than that is truncated, unless a WAL holds the rest
  // (then SQLite finds any damage when it reads the missing pages).
  std::uint32_t page_size = bigEndian(header + 16, 2);
  if (page_size == 1) page_size = 65536;
  const std::uint32_t pages = bigEndian(header + 28, 4);
  if (bigEndian(header + 92, 4) == bigEndian(header + 24, 4) && pages > 0) {
    const std::uint64_t expected = std::uint64_t{pages} * page_size;
    std::error_code ec;
    const auto wal_size = std::filesystem::file_size(file.string() + "-wal", ec);
    const bool wal_holds_pages = !ec && wal_size > 0;
    if (size < expected && !wal_holds_pages) {
      if (torn == TornStores::KeepRowsBefore) {
        tear.file_bytes = size;
        tear.header_bytes = expected;
        return {};
      }
      return {StatusCode::Corrupt, name + " is truncated: its header says " + std::to_string(expected) +
                                       " bytes, the file has " + std::to_string(size)};
    }
  }
  return {};
}

}  // namespace

struct StoreReader::Impl {
  std::filesystem::path path;
  sqlite3* db = nullptr;
  SchemaVersion version;
  std::map<std::string, std::string, std::less<>> meta;
  std::vector<std::uint32_t> string_offsets;  // id -> [offsets[id], offsets[id + 1]) in string_data
  std::string string_data;
  std::optional<std::int32_t> rank;
  std::optional<std::int64_t> pid;
  std::int64_t realtime_offset_ns = 0;
  TornStores torn_stores = TornStores::Refuse;
  bool packed = false;     // schema 2: the big tables' rows are in pages (packed_pages.hpp)
  mutable StoreTear tear;  // grows as scans meet the tear

  ~Impl() {
    if (db != nullptr) sqlite3_close_v2(db);
  }

  Status error(int rc, std::string_view doing) const {
    Status s = detail::sqliteStatus(db, rc, path.string() + ": " + std::string(doing));
    if (s.code() == StatusCode::Corrupt) {
      return {StatusCode::Corrupt, s.message() + " (the store is damaged or truncated)"};
    }
    return s;
  }

  // Runs `sql` and calls `row(statement)` for each result row.
  template <class Row>
  Status scan(const char* sql, std::string_view what, Row&& row) const {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db, sql, -1, &raw, nullptr);
    detail::Statement statement(raw);
    if (rc != SQLITE_OK) return error(rc, "cannot read " + std::string(what));
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) row(raw);
    if (rc != SQLITE_DONE) return error(rc, "cannot read " + std::string(what));
    return {};
  }

  // Every row of `table` (the given columns): all of them, or with KeepRowsBefore those before
  // its first unreadable row, the table then noted in `tear`.
  template <class Row>
  Status scanTable(std::string_view table, const std::string& columns, Row&& row) const {
    if (torn_stores == TornStores::Refuse) {
      const std::string sql = "SELECT " + columns + " FROM " + std::string(table);
      return scan(sql.c_str(), table, row);
    }
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db, selectUpToTear(columns, table).c_str(), -1, &raw, nullptr);
    detail::Statement statement(raw);
    if (rc != SQLITE_OK) return error(rc, "cannot read " + std::string(table));
    const PrefixRead read = stepUntilTorn(raw, row);
    if (read.torn) {
      noteTorn(table, read.rows);
      return {};
    }
    if (read.rc != SQLITE_DONE) return error(read.rc, "cannot read " + std::string(table));
    return {};
  }

  void noteTorn(std::string_view table, std::int64_t rows_kept) const {
    auto it = std::find_if(tear.tables.begin(), tear.tables.end(), [&](const TornTable& t) { return t.table == table; });
    if (it == tear.tables.end()) it = tear.tables.insert(tear.tables.end(), TornTable{std::string(table), 0});
    it->rows_kept = rows_kept;
  }

  // Whether the store has `table` (tables added by a later minor version are absent from older stores).
  Result<bool> hasTable(std::string_view table) const {
    const std::string sql = "SELECT count(*) FROM sqlite_schema WHERE type='table' AND name='" + std::string(table) + "'";
    int count = 0;
    if (Status s = scan(sql.c_str(), "the schema", [&](sqlite3_stmt* st) { count = sqlite3_column_int(st, 0); }); !s.ok()) {
      return s;
    }
    return count > 0;
  }

  // Every row of the pages of Row's table, in order; with KeepRowsBefore those before the first
  // page that cannot be read (damaged, malformed, or not after the page before it).
  template <class Row, class Fn>
  Status forEachPackedRow(Fn&& fn) const {
    const std::string table = detail::pagesTable<Row>();
    const std::string columns = detail::pageColumnList<Row>();
    const std::string sql = torn_stores == TornStores::Refuse ? "SELECT " + columns + " FROM " + table + " ORDER BY rowid"
                                                              : selectUpToTear(columns, table);
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr);
    detail::Statement statement(raw);
    const std::string_view name = detail::StoreTable<Row>::name;
    if (rc != SQLITE_OK) return error(rc, "cannot read " + std::string(name));
    Row row;
    std::int64_t next_id = 1, rows = 0;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
      if (!detail::readPage(raw, next_id, row, [&](const Row& r) { fn(r); ++rows; })) {
        if (torn_stores == TornStores::KeepRowsBefore) {
          noteTorn(name, rows);
          return {};
        }
        return {StatusCode::Corrupt, path.string() + ": a page of " + std::string(name) +
                                         " is malformed (the store is damaged or truncated)"};
      }
    }
    if (torn_stores == TornStores::KeepRowsBefore && (rc & 0xff) == SQLITE_CORRUPT) {
      noteTorn(name, rows);
      return {};
    }
    if (rc != SQLITE_DONE) return error(rc, "cannot read " + std::string(name));
    return {};
  }

  // The rows of Row's pages: their row counts summed (each bounded as a reader bounds it), or
  // with KeepRowsBefore after damage, the rows before the tear counted one by one.
  template <class Row>
  Result<std::int64_t> countPacked() const {
    const std::string sql = "SELECT coalesce(sum(min(max(row_count,0)," + std::to_string(detail::kMaxRowsPerPage) +
                            ")),0) FROM " + detail::pagesTable<Row>();
    std::int64_t count = 0;
    Status s = scan(sql.c_str(), detail::StoreTable<Row>::name, [&](sqlite3_stmt* st) { count = sqlite3_column_int64(st, 0); });
    if (s.code() == StatusCode::Corrupt && torn_stores == TornStores::KeepRowsBefore) {
      count = 0;
      s = forEachPackedRow<Row>([&](const Row&) { ++count; });
    }
    if (!s.ok()) return s;
    return count;
  }

  // Every row of Row's table, read into one reused row and handed to `fn`. A table added by a
  // later minor version reads as empty from a store written before it.
  template <class Row, class Fn>
  Status forEachRow(Fn&& fn) const {
    using Declared = detail::StoreTable<Row>;
    if constexpr (detail::kPacked<Row>) {
      if (packed) return forEachPackedRow<Row>(fn);
    }
    if constexpr (Declared::added_in_minor > 0) {
      const Result<bool> present = hasTable(Declared::name);
      if (!present.ok()) return present.status();
      if (!*present) return {};
    }
    Row row;
    return scanTable(Declared::name, detail::columnList<Row>(), [&](sqlite3_stmt* s) {
      detail::readRow(s, row);
      fn(row);
    });
  }

  Status loadMeta() {
    return forEachRow<MetaRow>([&](const MetaRow& row) { meta[row.key] = row.value; });
  }

  Status loadStrings() {
    std::vector<std::pair<std::uint32_t, std::string>> rows;
    std::uint32_t max_id = 0;
    Status status = forEachRow<StringRow>([&](const StringRow& row) {
      if (row.id <= 0 || row.id > UINT32_MAX) return;
      rows.emplace_back(static_cast<std::uint32_t>(row.id), row.value);
      max_id = std::max(max_id, static_cast<std::uint32_t>(row.id));
    });
    if (!status.ok()) return status;
    std::sort(rows.begin(), rows.end());
    string_offsets.assign(std::size_t{max_id} + 2, 0);
    std::size_t total = 0;
    for (const auto& r : rows) total += r.second.size();
    string_data.reserve(total);
    std::size_t next = 0;
    for (std::uint32_t id = 0; id <= max_id; ++id) {
      string_offsets[id] = static_cast<std::uint32_t>(string_data.size());
      if (next < rows.size() && rows[next].first == id) string_data += rows[next++].second;
    }
    string_offsets[std::size_t{max_id} + 1] = static_cast<std::uint32_t>(string_data.size());
    if (string_data.size() > UINT32_MAX) return {StatusCode::OutOfMemory, path.string() + ": strings exceed 4 GiB"};
    return {};
  }

  Status open(const std::filesystem::path& file, TornStores torn) {
    path = file;
    torn_stores = torn;
    const std::string name = file.string();
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return {StatusCode::NotFound, name + ": no such file"};
    if (Status s = checkHeader(file, torn, tear); !s.ok()) return s;

    constexpr int kFlags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
    const int rc = torn == TornStores::KeepRowsBefore ? openUpToTear(name, kFlags, &db)
                                                      : sqlite3_open_v2(name.c_str(), &db, kFlags, nullptr);
    if (rc != SQLITE_OK) return error(rc, "cannot open");
    sqlite3_busy_timeout(db, 2000);

    const Result<bool> has_meta = hasTable(tableName(Table::Meta));
    if (!has_meta.ok()) return has_meta.status();
    if (!*has_meta) return {StatusCode::NotAStore, name + " has no meta table, so it is not a Syncopate store"};
    if (Status s = loadMeta(); !s.ok()) return s;

    const auto version_text = meta.find("schema_version");
    if (version_text == meta.end() && !tear.tables.empty()) {
      return {StatusCode::Corrupt, name + " is torn before its meta table could be read, so it cannot be read at all" +
                                       (tear.header_bytes > 0 ? " (the file has " + std::to_string(tear.file_bytes) +
                                                                    " of the " + std::to_string(tear.header_bytes) +
                                                                    " bytes its header says)"
                                                              : std::string())};
    }
    if (version_text == meta.end()) {
      return {StatusCode::NotAStore, name + " has no meta.schema_version, so it is not a Syncopate store"};
    }
    if (!parseSchemaVersion(version_text->second, version)) {
      return {StatusCode::Corrupt, name + " has an unreadable schema_version '" + version_text->second + "'"};
    }
    if (version.major < kOldestReadableMajor || version.major > kSchemaVersion.major) {
      const std::string ours = std::to_string(kOldestReadableMajor) + ".x to " + std::to_string(kSchemaVersion.major) + ".x";
      const std::string advice = version.major > kSchemaVersion.major
                                     ? "; read it with a newer syncopate"
                                     : "; it was written by an older syncopate, re-record or re-import the run";
      return {StatusCode::UnsupportedVersion, name + " has store schema " + version_text->second +
                                                  ", but this syncopate (" + std::string(toolVersion()) +
                                                  ") reads schema " + ours + " only" + advice};
    }
    packed = version.major >= 2;
    if (Status s = loadStrings(); !s.ok()) return s;

    if (const auto r = metaInt("rank"); r && *r >= 0 && *r <= INT32_MAX) rank = static_cast<std::int32_t>(*r);
    pid = metaInt("pid");
    realtime_offset_ns = metaInt("realtime_offset_ns").value_or(0);
    return {};
  }

  std::optional<std::int64_t> metaInt(std::string_view key) const {
    const auto it = meta.find(key);
    if (it == meta.end()) return std::nullopt;
    return parseInt(it->second);
  }
};

StoreReader::StoreReader(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
StoreReader::StoreReader(StoreReader&&) noexcept = default;
StoreReader& StoreReader::operator=(StoreReader&&) noexcept = default;
StoreReader::~StoreReader() = default;

#define SYNCOPATE_READ_NOTHROW(expr)                                                         \
  try {                                                                                      \
    return expr;                                                                             \
  } catch (const std::bad_alloc&) {                                                          \
    return Status{StatusCode::OutOfMemory, "out of memory reading " + impl_->path.string()}; \
  } catch (...) {                                                                            \
    return Status{StatusCode::Internal, "unexpected failure reading " + impl_->path.string()}; \
  }

Result<StoreReader> StoreReader::open(const std::filesystem::path& file, TornStores torn) noexcept {
  try {
    auto impl = std::make_unique<Impl>();
    if (Status s = impl->open(file, torn); !s.ok()) return s;
    return StoreReader(std::move(impl));
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::OutOfMemory, "out of memory opening " + file.string()};
  } catch (...) {
    return Status{StatusCode::Internal, "unexpected failure opening " + file.string()};
  }
}

const std::filesystem::path& StoreReader::path() const noexcept { return impl_->path; }
const StoreTear& StoreReader::tear() const noexcept { return impl_->tear; }
SchemaVersion StoreReader::schemaVersion() const noexcept { return impl_->version; }
const std::map<std::string, std::string, std::less<>>& StoreReader::meta() const noexcept { return impl_->meta; }

std::optional<std::string_view> StoreReader::metaValue(std::string_view key) const noexcept {
  const auto it = impl_->meta.find(key);
  if (it == impl_->meta.end()) return std::nullopt;
  return std::string_view(it->second);
}

std::optional<std::int32_t> StoreReader::rank() const noexcept { return impl_->rank; }
std::optional<std::int64_t> StoreReader::pid() const noexcept { return impl_->pid; }
std::int64_t StoreReader::realtimeOffsetNs() const noexcept { return impl_->realtime_offset_ns; }

std::string_view StoreReader::string(StringId id) const noexcept {
  const auto& offsets = impl_->string_offsets;
  if (id == kNoString || std::size_t{id} + 1 >= offsets.size()) return {};
  return std::string_view(impl_->string_data).substr(offsets[id], offsets[id + 1] - offsets[id]);
}

std::uint32_t StoreReader::maxStringId() const noexcept {
  const auto n = impl_->string_offsets.size();
  return n < 2 ? 0 : static_cast<std::uint32_t>(n - 2);
}

Result<std::int64_t> StoreReader::rowCount(Table table) const noexcept {
  try {
    if (impl_->packed) {
      std::optional<Result<std::int64_t>> counted;
      detail::forEachTable([&]<class Row>(std::type_identity<Row>) {
        if constexpr (detail::kPacked<Row>) {
          if (detail::StoreTable<Row>::name == tableName(table)) counted = impl_->countPacked<Row>();
        }
      });
      if (counted) return *counted;
    }
    const Result<bool> present = impl_->hasTable(tableName(table));
    if (!present.ok()) return present.status();
    if (!*present) return std::int64_t{0};
    const std::string sql = "SELECT count(*) FROM " + std::string(tableName(table));
    std::int64_t count = 0;
    Status s = impl_->scan(sql.c_str(), tableName(table), [&](sqlite3_stmt* st) { count = sqlite3_column_int64(st, 0); });
    if (s.code() == StatusCode::Corrupt && impl_->torn_stores == TornStores::KeepRowsBefore) {
      count = 0;  // the rows before the tear, counted one by one
      s = impl_->scanTable(tableName(table), "1", [&](sqlite3_stmt*) { ++count; });
    }
    if (!s.ok()) return s;
    return count;
  } catch (...) {
    return Status{StatusCode::OutOfMemory, "out of memory reading " + impl_->path.string()};
  }
}

#define SYNCOPATE_TABLE(Name, table, Enumerator, added_in_minor, comment)                             \
  Status StoreReader::forEach##Name(FunctionRef<void(const Name##Row&)> fn) const noexcept { \
    SYNCOPATE_READ_NOTHROW(impl_->forEachRow<Name##Row>(fn))                                 \
  }
#include "syncopate/trace/store_tables.inc"

Status StoreReader::checkIntegrity() const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    std::string first_problem;
    std::string line;
    Status s = impl_->scan("PRAGMA quick_check", "the whole file", [&](sqlite3_stmt* st) {
      detail::readValue(st, 0, line);
      if (line != "ok" && first_problem.empty()) first_problem = line;
    });
    if (!s.ok()) return s;
    if (!first_problem.empty()) {
      return Status{StatusCode::Corrupt, impl_->path.string() + " is damaged: " + first_problem};
    }
    return Status{};
  })())
}

}  // namespace syncopate::trace
