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

#include "sqlite_util.hpp"

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
// mistakes get a precise sentence (SQLite would only say "file is not a database").
Status checkHeader(const std::filesystem::path& file) {
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
      return {StatusCode::Corrupt, name + " is truncated: its header says " + std::to_string(expected) +
                                       " bytes, the file has " + std::to_string(size)};
    }
  }
  return {};
}

std::optional<std::int64_t> columnOptional(sqlite3_stmt* s, int column) {
  if (sqlite3_column_type(s, column) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(s, column);
}

template <class T>
std::optional<T> columnAs(sqlite3_stmt* s, int column) {
  if (sqlite3_column_type(s, column) == SQLITE_NULL) return std::nullopt;
  return static_cast<T>(sqlite3_column_int64(s, column));
}

std::string columnText(sqlite3_stmt* s, int column) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, column));
  if (text == nullptr) return {};
  return {text, static_cast<std::size_t>(sqlite3_column_bytes(s, column))};
}

std::optional<Dim3> columnDim3(sqlite3_stmt* s, int first) {
  if (sqlite3_column_type(s, first) == SQLITE_NULL) return std::nullopt;
  return Dim3{static_cast<std::uint32_t>(sqlite3_column_int64(s, first)),
              static_cast<std::uint32_t>(sqlite3_column_int64(s, first + 1)),
              static_cast<std::uint32_t>(sqlite3_column_int64(s, first + 2))};
}

}  // namespace

std::string_view tableName(Table table) noexcept {
  switch (table) {
    case Table::Strings: return "strings";
    case Table::Devices: return "devices";
    case Table::Threads: return "threads";
    case Table::Streams: return "streams";
    case Table::ApiCalls: return "api_calls";
    case Table::Ops: return "ops";
    case Table::Collectives: return "collectives";
    case Table::OpArgs: return "op_args";
    case Table::Allocations: return "allocations";
    case Table::Communicators: return "communicators";
    case Table::NvtxRanges: return "nvtx_ranges";
    case Table::Counters: return "counters";
    case Table::Diagnostics: return "diagnostics";
    case Table::NcclOps: return "nccl_ops";
    case Table::NcclKernelChannels: return "nccl_kernel_channels";
  }
  return "unknown";
}

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

  // Whether the store has `table` (tables added by a later minor version are absent from older stores).
  Result<bool> hasTable(std::string_view table) const {
    const std::string sql = "SELECT count(*) FROM sqlite_schema WHERE type='table' AND name='" + std::string(table) + "'";
    int count = 0;
    if (Status s = scan(sql.c_str(), "the schema", [&](sqlite3_stmt* st) { count = sqlite3_column_int(st, 0); }); !s.ok()) {
      return s;
    }
    return count > 0;
  }

  Status loadMeta() {
    return scan("SELECT key, value FROM meta", "meta",
                [&](sqlite3_stmt* s) { meta[columnText(s, 0)] = columnText(s, 1); });
  }

  Status loadStrings() {
    std::vector<std::pair<std::uint32_t, std::string>> rows;
    std::uint32_t max_id = 0;
    Status status = scan("SELECT id, value FROM strings", "strings", [&](sqlite3_stmt* s) {
      const std::int64_t id = sqlite3_column_int64(s, 0);
      if (id <= 0 || id > UINT32_MAX) return;
      rows.emplace_back(static_cast<std::uint32_t>(id), columnText(s, 1));
      max_id = std::max(max_id, static_cast<std::uint32_t>(id));
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

  Status open(const std::filesystem::path& file) {
    path = file;
    const std::string name = file.string();
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return {StatusCode::NotFound, name + ": no such file"};
    if (Status s = checkHeader(file); !s.ok()) return s;

    const int rc = sqlite3_open_v2(name.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
                                   nullptr);
    if (rc != SQLITE_OK) return error(rc, "cannot open");
    sqlite3_busy_timeout(db, 2000);

    int has_meta = 0;
    Status status = scan("SELECT count(*) FROM sqlite_schema WHERE type='table' AND name='meta'", "the schema",
                         [&](sqlite3_stmt* s) { has_meta = sqlite3_column_int(s, 0); });
    if (!status.ok()) return status;
    if (has_meta == 0) return {StatusCode::NotAStore, name + " has no meta table, so it is not a Syncopate store"};
    if (Status s = loadMeta(); !s.ok()) return s;

    const auto version_text = meta.find("schema_version");
    if (version_text == meta.end()) {
      return {StatusCode::NotAStore, name + " has no meta.schema_version, so it is not a Syncopate store"};
    }
    if (!parseSchemaVersion(version_text->second, version)) {
      return {StatusCode::Corrupt, name + " has an unreadable schema_version '" + version_text->second + "'"};
    }
    if (version.major != kSchemaVersion.major) {
      const std::string ours = std::to_string(kSchemaVersion.major) + ".x";
      const std::string advice = version.major > kSchemaVersion.major
                                     ? "; read it with a newer syncopate"
                                     : "; it was written by an older syncopate, re-record or re-import the run";
      return {StatusCode::UnsupportedVersion, name + " has store schema " + version_text->second +
                                                  ", but this syncopate (" + std::string(toolVersion()) +
                                                  ") reads schema " + ours + " only" + advice};
    }
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

Result<StoreReader> StoreReader::open(const std::filesystem::path& file) noexcept {
  try {
    auto impl = std::make_unique<Impl>();
    if (Status s = impl->open(file); !s.ok()) return s;
    return StoreReader(std::move(impl));
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::OutOfMemory, "out of memory opening " + file.string()};
  } catch (...) {
    return Status{StatusCode::Internal, "unexpected failure opening " + file.string()};
  }
}

const std::filesystem::path& StoreReader::path() const noexcept { return impl_->path; }
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
    const Result<bool> present = impl_->hasTable(tableName(table));
    if (!present.ok()) return present.status();
    if (!*present) return std::int64_t{0};
    const std::string sql = "SELECT count(*) FROM " + std::string(tableName(table));
    std::int64_t count = 0;
    Status s = impl_->scan(sql.c_str(), tableName(table), [&](sqlite3_stmt* st) { count = sqlite3_column_int64(st, 0); });
    if (!s.ok()) return s;
    return count;
  } catch (...) {
    return Status{StatusCode::OutOfMemory, "out of memory reading " + impl_->path.string()};
  }
}

Status StoreReader::forEachApiCall(FunctionRef<void(const ApiCallRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    ApiCallRow row;
    return impl_->scan("SELECT id,thread_id,domain,name_id,start_ns,end_ns,correlation_id,result FROM api_calls",
                       "api_calls", [&](sqlite3_stmt* s) {
                         row.id = sqlite3_column_int64(s, 0);
                         row.thread_id = static_cast<ThreadId>(sqlite3_column_int64(s, 1));
                         row.domain = static_cast<ApiDomain>(sqlite3_column_int(s, 2));
                         row.name_id = static_cast<StringId>(sqlite3_column_int64(s, 3));
                         row.start_ns = sqlite3_column_int64(s, 4);
                         row.end_ns = sqlite3_column_int64(s, 5);
                         row.correlation_id = columnOptional(s, 6);
                         row.result = columnOptional(s, 7);
                         fn(row);
                       });
  })())
}

Status StoreReader::forEachOp(FunctionRef<void(const OpRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    OpRow row;
    return impl_->scan(
        "SELECT id,kind,device_id,stream_id,name_id,start_ns,end_ns,correlation_id,bytes,memcpy_kind,"
        "grid_x,grid_y,grid_z,block_x,block_y,block_z,event_id,sync_kind FROM ops",
        "ops", [&](sqlite3_stmt* s) {
          row.id = sqlite3_column_int64(s, 0);
          row.kind = static_cast<OpKind>(sqlite3_column_int(s, 1));
          row.device_id = columnAs<std::int32_t>(s, 2);
          row.stream_id = columnAs<StreamId>(s, 3);
          row.name_id = static_cast<StringId>(sqlite3_column_int64(s, 4));
          row.start_ns = sqlite3_column_int64(s, 5);
          row.end_ns = sqlite3_column_int64(s, 6);
          row.correlation_id = columnOptional(s, 7);
          row.bytes = columnOptional(s, 8);
          row.memcpy_kind = columnAs<MemcpyKind>(s, 9);
          row.grid = columnDim3(s, 10);
          row.block = columnDim3(s, 13);
          row.event_id = columnAs<EventId>(s, 16);
          row.sync_kind = columnAs<SyncKind>(s, 17);
          fn(row);
        });
  })())
}

Status StoreReader::forEachCollective(FunctionRef<void(const CollectiveRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    CollectiveRow row;
    return impl_->scan(
        "SELECT correlation_id,comm_id,comm_rank,comm_size,seq,coll_type,dtype,red_op,count,bytes,root_or_peer,"
        "group_id FROM collectives",
        "collectives", [&](sqlite3_stmt* s) {
          row.correlation_id = sqlite3_column_int64(s, 0);
          row.comm_id = static_cast<std::uint64_t>(sqlite3_column_int64(s, 1));
          row.comm_rank = columnAs<std::int32_t>(s, 2);
          row.comm_size = columnAs<std::int32_t>(s, 3);
          row.seq = static_cast<std::uint64_t>(sqlite3_column_int64(s, 4));
          row.coll_type = static_cast<CollType>(sqlite3_column_int(s, 5));
          row.dtype = columnAs<DataType>(s, 6);
          row.red_op = columnAs<RedOp>(s, 7);
          row.count = columnAs<std::uint64_t>(s, 8);
          row.bytes = columnAs<std::uint64_t>(s, 9);
          row.root_or_peer = columnAs<std::int32_t>(s, 10);
          row.group_id = columnAs<std::uint32_t>(s, 11);
          fn(row);
        });
  })())
}

Status StoreReader::forEachOpArg(FunctionRef<void(const OpArgRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    OpArgRow row;
    return impl_->scan("SELECT correlation_id,arg_index,address FROM op_args", "op_args", [&](sqlite3_stmt* s) {
      row.correlation_id = sqlite3_column_int64(s, 0);
      row.arg_index = static_cast<std::uint32_t>(sqlite3_column_int64(s, 1));
      row.address = static_cast<std::uint64_t>(sqlite3_column_int64(s, 2));
      fn(row);
    });
  })())
}

Status StoreReader::forEachNvtxRange(FunctionRef<void(const NvtxRangeRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    NvtxRangeRow row;
    return impl_->scan(
        "SELECT id,thread_id,domain_id,name_id,start_ns,end_ns,depth,color,category FROM nvtx_ranges", "nvtx_ranges",
        [&](sqlite3_stmt* s) {
          row.id = sqlite3_column_int64(s, 0);
          row.thread_id = columnAs<ThreadId>(s, 1);
          row.domain_id = columnAs<StringId>(s, 2);
          row.name_id = static_cast<StringId>(sqlite3_column_int64(s, 3));
          row.start_ns = sqlite3_column_int64(s, 4);
          row.end_ns = sqlite3_column_int64(s, 5);
          row.depth = columnAs<std::uint32_t>(s, 6);
          row.color = columnAs<std::uint32_t>(s, 7);
          row.category = columnAs<std::uint32_t>(s, 8);
          fn(row);
        });
  })())
}

Status StoreReader::forEachAllocation(FunctionRef<void(const AllocationRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    AllocationRow row;
    return impl_->scan("SELECT id,device_id,address,bytes,kind,alloc_ns,free_ns FROM allocations", "allocations",
                       [&](sqlite3_stmt* s) {
                         row.id = sqlite3_column_int64(s, 0);
                         row.device_id = columnAs<std::int32_t>(s, 1);
                         row.address = static_cast<std::uint64_t>(sqlite3_column_int64(s, 2));
                         row.bytes = static_cast<std::uint64_t>(sqlite3_column_int64(s, 3));
                         row.kind = static_cast<AllocKind>(sqlite3_column_int(s, 4));
                         row.alloc_ns = sqlite3_column_int64(s, 5);
                         row.free_ns = columnOptional(s, 6);
                         fn(row);
                       });
  })())
}

Status StoreReader::forEachStream(FunctionRef<void(const StreamRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    StreamRow row;
    return impl_->scan("SELECT id,device_id,handle,flags,priority,name FROM streams", "streams", [&](sqlite3_stmt* s) {
      row.id = static_cast<StreamId>(sqlite3_column_int64(s, 0));
      row.device_id = sqlite3_column_int(s, 1);
      row.handle = columnAs<std::uint64_t>(s, 2);
      row.flags = columnAs<std::uint32_t>(s, 3);
      row.priority = columnAs<std::int32_t>(s, 4);
      row.name = columnText(s, 5);
      fn(row);
    });
  })())
}

Status StoreReader::forEachDevice(FunctionRef<void(const DeviceRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    DeviceRow row;
    return impl_->scan("SELECT id,name,uuid,pci_bus_id,sm_count,memory_bytes FROM devices", "devices",
                       [&](sqlite3_stmt* s) {
                         row.id = sqlite3_column_int(s, 0);
                         row.name = columnText(s, 1);
                         row.uuid = columnText(s, 2);
                         row.pci_bus_id = columnText(s, 3);
                         row.sm_count = columnAs<std::int32_t>(s, 4);
                         row.memory_bytes = columnOptional(s, 5);
                         fn(row);
                       });
  })())
}

Status StoreReader::forEachThread(FunctionRef<void(const ThreadRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    ThreadRow row;
    return impl_->scan("SELECT id,tid,name FROM threads", "threads", [&](sqlite3_stmt* s) {
      row.id = static_cast<ThreadId>(sqlite3_column_int64(s, 0));
      row.tid = sqlite3_column_int64(s, 1);
      row.name = columnText(s, 2);
      fn(row);
    });
  })())
}

Status StoreReader::forEachCommunicator(FunctionRef<void(const CommunicatorRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    CommunicatorRow row;
    return impl_->scan(
        "SELECT comm_id,comm_rank,comm_size,device_id,handle,init_ns,parent_comm_id FROM communicators",
        "communicators", [&](sqlite3_stmt* s) {
          row.comm_id = static_cast<std::uint64_t>(sqlite3_column_int64(s, 0));
          row.comm_rank = sqlite3_column_int(s, 1);
          row.comm_size = sqlite3_column_int(s, 2);
          row.device_id = columnAs<std::int32_t>(s, 3);
          row.handle = columnAs<std::uint64_t>(s, 4);
          row.init_ns = columnOptional(s, 5);
          row.parent_comm_id = columnAs<std::uint64_t>(s, 6);
          fn(row);
        });
  })())
}

Status StoreReader::forEachNcclOp(FunctionRef<void(const NcclOpRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    const Result<bool> present = impl_->hasTable("nccl_ops");
    if (!present.ok() || !*present) return present.ok() ? Status{} : present.status();
    NcclOpRow row;
    return impl_->scan(
        "SELECT correlation_id,func_id,nccl_seq,algorithm_id,protocol_id,channels,warps FROM nccl_ops", "nccl_ops",
        [&](sqlite3_stmt* s) {
          row.correlation_id = sqlite3_column_int64(s, 0);
          row.func_id = static_cast<StringId>(sqlite3_column_int64(s, 1));
          row.nccl_seq = columnAs<std::uint64_t>(s, 2);
          row.algorithm_id = columnAs<StringId>(s, 3);
          row.protocol_id = columnAs<StringId>(s, 4);
          row.channels = columnAs<std::uint32_t>(s, 5);
          row.warps = columnAs<std::uint32_t>(s, 6);
          fn(row);
        });
  })())
}

Status StoreReader::forEachNcclKernelChannel(FunctionRef<void(const NcclKernelChannelRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    const Result<bool> present = impl_->hasTable("nccl_kernel_channels");
    if (!present.ok() || !*present) return present.ok() ? Status{} : present.status();
    NcclKernelChannelRow row;
    return impl_->scan("SELECT correlation_id,channel,start_timer,end_timer FROM nccl_kernel_channels",
                       "nccl_kernel_channels", [&](sqlite3_stmt* s) {
                         row.correlation_id = sqlite3_column_int64(s, 0);
                         row.channel = static_cast<std::uint32_t>(sqlite3_column_int64(s, 1));
                         row.start_timer = columnAs<std::uint64_t>(s, 2);
                         row.end_timer = columnAs<std::uint64_t>(s, 3);
                         fn(row);
                       });
  })())
}

Status StoreReader::forEachCounter(FunctionRef<void(const CounterRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    CounterRow row;
    return impl_->scan("SELECT name,value FROM counters", "counters", [&](sqlite3_stmt* s) {
      row.name = columnText(s, 0);
      row.value = sqlite3_column_int64(s, 1);
      fn(row);
    });
  })())
}

Status StoreReader::forEachDiagnostic(FunctionRef<void(const DiagnosticRow&)> fn) const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    DiagnosticRow row;
    return impl_->scan("SELECT id,severity,source,message,count,first_ns FROM diagnostics", "diagnostics",
                       [&](sqlite3_stmt* s) {
                         row.id = sqlite3_column_int64(s, 0);
                         row.severity = static_cast<Severity>(sqlite3_column_int(s, 1));
                         row.source = columnText(s, 2);
                         row.message = columnText(s, 3);
                         row.count = sqlite3_column_int64(s, 4);
                         row.first_ns = columnOptional(s, 5);
                         fn(row);
                       });
  })())
}

Status StoreReader::checkIntegrity() const noexcept {
  SYNCOPATE_READ_NOTHROW(([&] {
    std::string first_problem;
    Status s = impl_->scan("PRAGMA quick_check", "the whole file", [&](sqlite3_stmt* st) {
      const std::string line = columnText(st, 0);
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
