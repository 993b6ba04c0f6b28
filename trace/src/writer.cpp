#include "syncopate/trace/writer.hpp"

#include <sqlite3.h>
#include <stdio.h>  // renameat2
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <unordered_map>
#include <vector>

#include "packed_pages.hpp"
#include "record_rows.hpp"
#include "row_binding.hpp"
#include "sqlite_util.hpp"
#include "store_connection.hpp"
#include "syncopate/trace/clock.hpp"
#include "syncopate/trace/diagnostics.hpp"
#include "syncopate/trace/run_dir.hpp"
#include "syncopate/trace/schema.hpp"

namespace syncopate::trace {

namespace {

using detail::bindInt;
using detail::bindRow;
using detail::Statement;
using detail::writtenColumnCount;

constexpr const char* kWriterSource = "trace.writer";

// The open page of a packed table (packed_pages.hpp): its rows so far, and what of it the store
// holds. A full page is written at once; the open one at every flush, replacing the shorter copy
// the flush before wrote, so that every flush commits every row and pages still end up full.
template <class Row>
struct OpenPage {
  std::vector<Row> rows;
  std::int64_t first_id = 1;
  // As of the last commit: the open page then, and how many of its rows it had.
  std::int64_t committed_first_id = 1;
  std::size_t committed_rows = 0;
  detail::PageEncoder<Row> encoder;

  bool unwritten() const { return first_id != committed_first_id || rows.size() != committed_rows; }
  void committed() {
    committed_first_id = first_id;
    committed_rows = rows.size();
  }
  // The open batch was rolled back: the store holds the page as of the last commit.
  void rolledBack() {
    if (first_id == committed_first_id) {
      rows.resize(committed_rows);
    } else {  // it filled up and was written since: what the store has of it stays a short page
      first_id = committed_first_id + static_cast<std::int64_t>(committed_rows);
      rows.clear();
      committed();
    }
  }
};

// How far the catalog has been written.
struct CatalogMarks {
  std::uint32_t strings = 0, streams = 0, threads = 0, devices = 0, communicators = 0;
};

// An allocation or a free, held until the flush orders them by time: they may come from
// different threads' buffers, drained in any order.
struct MemoryEvent {
  std::int64_t time_ns;
  bool is_free;
  bool carried;  // a free already held over one flush waiting for its allocation
  AllocRecord alloc;
  std::uint64_t address;
};

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

// rename(2) that never replaces `to`: renameat2(RENAME_NOREPLACE) where the filesystem has
// it, else link+unlink (link fails on an existing name).
int renameNoReplace(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return errno;
  if (::link(from.c_str(), to.c_str()) != 0) return errno;
  ::unlink(from.c_str());
  return 0;
}


}  // namespace

struct StoreWriter::Impl {
  Impl(Catalog& c, StoreIdentity id, std::filesystem::path p)
      : catalog(c), converter(c), identity(std::move(id)), path(std::move(p)) {}

  Catalog& catalog;
  detail::RecordRows converter;
  StoreIdentity identity;
  std::filesystem::path path;
  detail::StoreConnection connection;

  bool in_batch = false;
  std::uint64_t batch_rows = 0;  // rows of data tables in the open batch, written or pending
  OpenPage<ApiCallRow> api_calls;
  OpenPage<OpRow> ops;
  OpenPage<OpArgRow> op_args;
  OpenPage<NvtxRangeRow> nvtx_ranges;
  std::vector<CollectiveRow> pending_collectives;
  CatalogMarks committed, pending;

  std::map<std::string, std::string, std::less<>> meta;
  std::map<std::string, std::int64_t, std::less<>> counters;
  std::vector<DiagnosticRow> diagnostics;  // id = index + 1
  bool state_dirty = true;

  std::unordered_map<std::uint64_t, std::int64_t> live_allocations;  // address -> allocations.id
  std::int64_t next_allocation_id = 1;
  std::vector<MemoryEvent> memory_events;

  WriterStats stats;
  std::uint64_t frees_without_alloc = 0;
  std::uint64_t negative_durations = 0;
  std::uint64_t unknown_records = 0;
  std::optional<Status> closed;  // the result of close(), once closed
  Status broken;                 // set when the store could not be reopened after a rename

  sqlite3* db() { return connection.db(); }
  detail::WriteStatements& st() { return connection.statements(); }

  Status usable() const {
    if (closed) return {StatusCode::InvalidArgument, path.string() + " is closed"};
    return broken;
  }

  Status begin() {
    if (in_batch) return {};
    const int rc = sqlite3_exec(db(), "BEGIN", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return detail::sqliteStatus(db(), rc, connection.doing());
    in_batch = true;
    return {};
  }

  Status run(sqlite3_stmt* statement) {
    const int rc = sqlite3_step(statement);
    if (rc != SQLITE_DONE) {
      Status status = detail::sqliteStatus(db(), rc, connection.doing());
      sqlite3_reset(statement);
      return status;
    }
    sqlite3_reset(statement);
    return {};
  }

  // A row of a data table: counted, because a failed batch loses it (catalog, meta, counters
  // and diagnostics are rewritten by the next flush instead).
  Status runData(sqlite3_stmt* statement) {
    Status status = run(statement);
    if (status.ok()) ++batch_rows;
    return status;
  }

  // Abandons the open batch after `status`: its rows (and `unwritten` more) are lost and
  // counted; catalog entries it held are written again by the next flush.
  Status fail(Status status, std::uint64_t unwritten) {
    if (in_batch && sqlite3_get_autocommit(db()) == 0) sqlite3_exec(db(), "ROLLBACK", nullptr, nullptr, nullptr);
    in_batch = false;
    pending_collectives.clear();
    forEachOpenPage([](auto& page) { page.rolledBack(); });
    stats.rows_lost += batch_rows + unwritten;
    batch_rows = 0;
    pending = committed;
    state_dirty = true;
    return status;
  }

  void checkDuration(std::int64_t start, std::int64_t end) {
    if (end < start) ++negative_durations;
  }

  template <class Fn>
  void forEachOpenPage(Fn&& fn) {
    fn(api_calls);
    fn(ops);
    fn(op_args);
    fn(nvtx_ranges);
  }

  template <class Row>
  Status writePage(sqlite3_stmt* statement, OpenPage<Row>& page) {
    page.encoder.bind(statement, page.first_id, page.rows);
    return run(statement);
  }

  // Rows of the packed tables, shared by records and the row API: kept in the open page, which
  // is written when full and at every flush. They do not call fail(): the caller does.
  template <class Row>
  Status add(sqlite3_stmt* statement, OpenPage<Row>& page, const Row& row) {
    if (Status s = begin(); !s.ok()) return s;
    page.rows.push_back(row);
    ++batch_rows;
    if (page.rows.size() < detail::kRowsPerPage) return {};
    if (Status s = writePage(statement, page); !s.ok()) return s;
    page.first_id += static_cast<std::int64_t>(page.rows.size());
    page.rows.clear();
    return {};
  }

  // Rows of collectives: buffered, and written kRowsPerInsert at a time (the rest at flush).
  template <class Row>
  Status add(detail::BatchedInsert& insert, std::vector<Row>& rows, const Row& row) {
    if (Status s = begin(); !s.ok()) return s;
    rows.push_back(row);
    ++batch_rows;
    if (rows.size() < static_cast<std::size_t>(detail::kRowsPerInsert)) return {};
    sqlite3_stmt* many = insert.many.get();
    constexpr int kColumns = writtenColumnCount<Row>();
    for (std::size_t i = 0; i < rows.size(); ++i) bindRow(many, static_cast<int>(i) * kColumns + 1, rows[i]);
    rows.clear();
    return run(many);
  }

  template <class Row>
  Status writePending(detail::BatchedInsert& insert, std::vector<Row>& rows) {
    for (const Row& row : rows) {
      bindRow(insert.one.get(), 1, row);
      if (Status s = run(insert.one.get()); !s.ok()) return s;
    }
    rows.clear();
    return {};
  }

  Status writeAllPending() {
    auto& s = st();
    Status status = writePending(s.collective, pending_collectives);
    if (status.ok() && api_calls.unwritten()) status = writePage(s.api_call_page.get(), api_calls);
    if (status.ok() && ops.unwritten()) status = writePage(s.op_page.get(), ops);
    if (status.ok() && op_args.unwritten()) status = writePage(s.op_arg_page.get(), op_args);
    if (status.ok() && nvtx_ranges.unwritten()) status = writePage(s.nvtx_page.get(), nvtx_ranges);
    return status;
  }

  Status insert(const ApiCallRow& r) {
    checkDuration(r.start_ns, r.end_ns);
    return add(st().api_call_page.get(), api_calls, r);
  }
  Status insert(const OpRow& r) {
    checkDuration(r.start_ns, r.end_ns);
    return add(st().op_page.get(), ops, r);
  }
  Status insert(const CollectiveRow& r) { return add(st().collective, pending_collectives, r); }
  Status insert(const OpArgRow& r) { return add(st().op_arg_page.get(), op_args, r); }
  Status insert(const NvtxRangeRow& r) {
    checkDuration(r.start_ns, r.end_ns);
    return add(st().nvtx_page.get(), nvtx_ranges, r);
  }

  // Rows of the small tables, written at once: allocations (few, and later updated by id) and
  // NCCL profiler rows (one per operation, one per kernel channel).
  template <class Row>
  Status insertNow(Statement& statement, const Row& row) {
    if (Status s = begin(); !s.ok()) return s;
    bindRow(statement.get(), 1, row);
    return runData(statement.get());
  }

  Status insert(AllocationRow r) {
    r.id = next_allocation_id;
    if (Status status = insertNow(st().allocation, r); !status.ok()) return status;
    ++next_allocation_id;
    return {};
  }

  Status setFreed(std::int64_t allocation_id, std::int64_t free_ns) {
    sqlite3_stmt* s = st().free_allocation.get();
    bindInt(s, 1, free_ns);
    bindInt(s, 2, allocation_id);
    return runData(s);
  }

  // Orders the held allocations and frees by time and applies them. A free whose allocation
  // is unknown waits one more flush (its allocation may sit in a buffer drained later), then
  // is counted; at close nothing waits.
  Status applyMemoryEvents(bool final) {
    if (memory_events.empty()) return {};
    std::stable_sort(memory_events.begin(), memory_events.end(), [](const MemoryEvent& a, const MemoryEvent& b) {
      if (a.time_ns != b.time_ns) return a.time_ns < b.time_ns;
      return a.is_free && !b.is_free;  // at one instant an address is freed before it is reused
    });
    std::vector<MemoryEvent> waiting;
    for (const MemoryEvent& e : memory_events) {
      if (!e.is_free) {
        const std::int64_t id = next_allocation_id;
        if (Status s = insert(converter.allocation(e.alloc)); !s.ok()) return s;
        live_allocations[e.address] = id;
        continue;
      }
      const auto it = live_allocations.find(e.address);
      if (it != live_allocations.end()) {
        if (Status s = setFreed(it->second, e.time_ns); !s.ok()) return s;
        live_allocations.erase(it);
      } else if (!final && !e.carried) {
        MemoryEvent again = e;
        again.carried = true;
        waiting.push_back(again);
      } else {
        ++frees_without_alloc;
      }
    }
    memory_events = std::move(waiting);
    return {};
  }

  bool catalogHasNews() const {
    return catalog.stringCount() > pending.strings || catalog.streamCount() > pending.streams ||
           catalog.threadCount() > pending.threads || catalog.deviceCount() > pending.devices ||
           catalog.communicatorCount() > pending.communicators;
  }

  // Writes catalog entries from `pending` on, one kind at a time; `pending` follows what is
  // written, so a failed flush knows what to write again.
  template <class Row>
  Status writeNews(Statement& statement, std::uint32_t& written, std::uint32_t count,
                   Row (*row)(const Catalog&, std::uint32_t)) {
    for (std::uint32_t id = written + 1; id <= count; ++id) {
      bindRow(statement.get(), 1, row(catalog, id));
      if (Status status = run(statement.get()); !status.ok()) return status;
      written = id;
    }
    return {};
  }

  Status writeCatalogNews() {
    auto& s = st();
    Status status = writeNews(s.string, pending.strings, catalog.stringCount(), detail::stringRow);
    if (status.ok()) status = writeNews(s.stream, pending.streams, catalog.streamCount(), detail::streamRow);
    if (status.ok()) status = writeNews(s.thread, pending.threads, catalog.threadCount(), detail::threadRow);
    if (status.ok()) status = writeNews(s.device, pending.devices, catalog.deviceCount(), detail::deviceRow);
    if (status.ok()) {
      status = writeNews(s.communicator, pending.communicators, catalog.communicatorCount(), detail::communicatorRow);
    }
    return status;
  }

  // The writer's own counters, each with its diagnostic when it is not zero.
  void refreshOwnCounters() {
    const std::pair<diagnostics::Key, std::uint64_t> own[] = {
        {diagnostics::rows_lost, stats.rows_lost},
        {diagnostics::failed_flushes, stats.failed_flushes},
        {diagnostics::ops_bytes_clamped, converter.bytesClamped()},
        {diagnostics::unknown_references, converter.unknownReferences()},
        {diagnostics::frees_without_alloc, frees_without_alloc},
        {diagnostics::negative_durations, negative_durations},
        {diagnostics::unknown_records, unknown_records},
        {diagnostics::catalog_failures, catalog.failedRegistrations()},
    };
    for (const auto& [key, value] : own) {
      if (value == 0) continue;
      const diagnostics::Entry& e = diagnostics::entry(key);
      counters[std::string(e.key)] = static_cast<std::int64_t>(value);
      setDiagnosticCount(e.severity, kWriterSource, e.sentence, static_cast<std::int64_t>(value));
    }
  }

  DiagnosticRow& diagnostic(Severity severity, std::string_view source, std::string_view message) {
    for (DiagnosticRow& d : diagnostics) {
      if (d.severity == severity && d.source == source && d.message == message) return d;
    }
    const auto id = static_cast<std::int64_t>(diagnostics.size() + 1);
    diagnostics.push_back({id, severity, std::string(source), std::string(message), 0, std::nullopt});
    return diagnostics.back();
  }

  void setDiagnosticCount(Severity severity, std::string_view source, std::string_view message, std::int64_t count) {
    DiagnosticRow& d = diagnostic(severity, source, message);
    if (d.count != count) {
      d.count = count;
      state_dirty = true;
    }
  }

  // meta, counters and diagnostics are small and kept in memory: every flush rewrites them,
  // so a failed flush loses none of them.
  Status writeState() {
    auto& s = st();
    for (const auto& [key, value] : meta) {
      bindRow(s.meta.get(), 1, MetaRow{key, value});
      if (Status status = run(s.meta.get()); !status.ok()) return status;
    }
    for (const auto& [name, value] : counters) {
      bindRow(s.counter.get(), 1, CounterRow{name, value});
      if (Status status = run(s.counter.get()); !status.ok()) return status;
    }
    for (const DiagnosticRow& d : diagnostics) {
      bindRow(s.diagnostic.get(), 1, d);
      if (Status status = run(s.diagnostic.get()); !status.ok()) return status;
    }
    return {};
  }

  Status flush(bool final) {
    if (Status s = usable(); !s.ok()) return s;
    refreshOwnCounters();
    if (!in_batch && !state_dirty && memory_events.empty() && !catalogHasNews()) return {};
    Status status = begin();
    if (status.ok()) status = writeAllPending();
    if (status.ok()) status = applyMemoryEvents(final);
    if (status.ok()) status = writeCatalogNews();
    if (status.ok()) {
      refreshOwnCounters();  // applyMemoryEvents may have counted frees
      status = writeState();
    }
    if (status.ok()) {
      const int rc = sqlite3_exec(db(), "COMMIT", nullptr, nullptr, nullptr);
      if (rc != SQLITE_OK) status = detail::sqliteStatus(db(), rc, connection.doing());
    }
    if (!status.ok()) {
      ++stats.failed_flushes;
      return fail(std::move(status), 0);
    }
    in_batch = false;
    committed = pending;
    forEachOpenPage([](auto& page) { page.committed(); });
    stats.rows_written += batch_rows;
    batch_rows = 0;
    state_dirty = false;
    ++stats.flushes;
    return {};
  }

  Status appendRecords(ThreadId thread, std::span<const Record> records) {
    if (Status s = usable(); !s.ok()) return s;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const Record& record = records[i];
      Status status;
      switch (record.type()) {
        case RecordType::ApiCall: status = insert(converter.apiCall(thread, record.as<ApiCallRecord>())); break;
        case RecordType::Op: status = insert(converter.op(record.as<OpRecord>())); break;
        case RecordType::Collective:
          if (const auto row = converter.collective(record.as<CollectiveRecord>())) status = insert(*row);
          break;
        case RecordType::OpArgs: {
          const auto args = record.as<OpArgsRecord>();
          for (std::uint8_t a = 0; a < std::min<std::uint8_t>(args.count, 2) && status.ok(); ++a) {
            status = insert(OpArgRow{args.correlation_id, args.index[a], args.address[a]});
          }
          break;
        }
        case RecordType::Nvtx: status = insert(converter.nvtx(thread, record.as<NvtxRecord>())); break;
        case RecordType::NcclOp: status = insertNow(st().nccl_op, detail::ncclOpRow(record.as<NcclOpRecord>())); break;
        case RecordType::NcclKernelChannel: {
          const auto channel = detail::ncclKernelChannelRow(record.as<NcclKernelChannelRecord>());
          status = insertNow(st().nccl_kernel_channel, channel);
          break;
        }
        case RecordType::Alloc: {
          const auto alloc = record.as<AllocRecord>();
          memory_events.push_back({alloc.time_ns, false, false, alloc, alloc.address});
          break;
        }
        case RecordType::Free: {
          const auto free_record = record.as<FreeRecord>();
          memory_events.push_back({free_record.time_ns, true, false, AllocRecord{}, free_record.address});
          break;
        }
        default: ++unknown_records; break;
      }
      if (!status.ok()) return fail(std::move(status), records.size() - i - 1);
      ++stats.records_appended;
    }
    return {};
  }

  template <class Row>
  Status writeRow(const Row& row) {
    if (Status s = usable(); !s.ok()) return s;
    if (Status s = insert(row); !s.ok()) return fail(std::move(s), 0);
    return {};
  }

  Status setRank(std::int32_t rank) {
    if (Status s = usable(); !s.ok()) return s;
    if (rank < 0) return {StatusCode::InvalidArgument, "rank " + std::to_string(rank) + " is negative"};
    if (identity.rank) {
      if (*identity.rank == rank) return {};
      return {StatusCode::InvalidArgument, path.string() + " already belongs to rank " +
                                               std::to_string(*identity.rank) + ", not " + std::to_string(rank)};
    }
    meta["rank"] = std::to_string(rank);
    state_dirty = true;
    if (Status s = flush(false); !s.ok()) return s;
    identity.rank = rank;
    if (path.filename() != pidStoreName(identity.pid)) return {};  // a named file keeps its name

    // Everything is committed; fold the WAL into the main file and close, so that nothing of
    // the store lives under the old name when it is renamed.
    const std::filesystem::path target = path.parent_path() / rankStoreName(rank);
    if (Status s = connection.checkpoint(); !s.ok()) return s;
    if (Status s = connection.close(); !s.ok()) return s;
    const int err = renameNoReplace(path, target);
    Status renamed;
    if (err != 0) {
      renamed = detail::errnoStatus(err, "cannot rename " + path.string() + " to " + target.filename().string());
      if (err == EEXIST) {
        renamed = {StatusCode::AlreadyExists, "cannot rename " + path.string() + " to " + target.filename().string() +
                                                  ": a store for rank " + std::to_string(rank) +
                                                  " already exists; this store keeps its pid name"};
      }
    } else {
      path = target;
    }
    if (Status s = connection.reopen(path); !s.ok()) {
      broken = s;
      return s;
    }
    return renamed;
  }

  Status close() {
    if (closed) return *closed;
    Status status = usable();
    if (status.ok()) {
      meta["end_ns"] = std::to_string(monotonicNs());
      state_dirty = true;
      status = flush(true);
      if (Status s = connection.checkpoint(); status.ok()) status = s;
    }
    if (Status s = connection.close(); status.ok()) status = s;
    closed = status;
    return status;
  }
};

StoreWriter::StoreWriter(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}

StoreWriter::~StoreWriter() {
  if (impl_) (void)close();  // the no-throw entry point: a destructor must not throw
}

Result<std::unique_ptr<StoreWriter>> StoreWriter::create(const std::filesystem::path& run_dir,
                                                         const StoreIdentity& identity, Catalog& catalog) noexcept {
  try {
    std::error_code ec;
    std::filesystem::create_directories(run_dir, ec);
    if (ec) return detail::errnoStatus(ec.value(), "cannot create run directory " + run_dir.string());
    const std::int64_t pid = identity.pid != 0 ? identity.pid : ::getpid();
    const std::string name = identity.rank ? rankStoreName(*identity.rank) : pidStoreName(pid);
    StoreIdentity resolved = identity;
    resolved.pid = pid;
    return createFile(run_dir / name, resolved, catalog);
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::OutOfMemory, "out of memory creating a store in " + run_dir.string()};
  } catch (...) {
    return Status{StatusCode::Internal, "unexpected failure creating a store"};
  }
}

Result<std::unique_ptr<StoreWriter>> StoreWriter::createFile(const std::filesystem::path& file,
                                                             const StoreIdentity& identity, Catalog& catalog) noexcept {
  try {
    if (!catalog.valid()) return Status{StatusCode::OutOfMemory, "the catalog could not allocate its tables"};
    if (identity.rank && *identity.rank < 0) {
      return Status{StatusCode::InvalidArgument, "rank " + std::to_string(*identity.rank) + " is negative"};
    }
    if (file.has_parent_path()) {
      std::error_code ec;
      std::filesystem::create_directories(file.parent_path(), ec);
      if (ec) return detail::errnoStatus(ec.value(), "cannot create directory " + file.parent_path().string());
    }
    auto impl = std::make_unique<Impl>(catalog, identity, file);
    StoreIdentity& id = impl->identity;
    if (id.pid == 0) id.pid = ::getpid();
    if (id.host.empty()) id.host = hostName();
    if (Status s = impl->connection.create(file); !s.ok()) return s;
    if (!impl->connection.walMode()) {
      const diagnostics::Entry& wal = diagnostics::entry(diagnostics::wal_refused);
      impl->diagnostic(wal.severity, kWriterSource, wal.sentence).count = 1;
    }

    const std::int64_t start = monotonicNs();
    auto& meta = impl->meta;
    meta["schema_version"] = toString(kSchemaVersion);
    meta["tool_version"] = std::string(toolVersion());
    meta["source"] = id.source;
    meta["host"] = id.host;
    meta["pid"] = std::to_string(id.pid);
    meta["rank"] = std::to_string(id.rank.value_or(-1));
    meta["clock"] = "CLOCK_MONOTONIC";
    meta["realtime_offset_ns"] = std::to_string(realtimeOffsetNs());
    meta["start_ns"] = std::to_string(start);
    // The store is identifiable (meta) and its header final (checkpoint) from the start, so
    // a reader can tell what it is even if this process dies before its first flush.
    Status status = impl->flush(false);
    if (status.ok()) status = impl->connection.checkpoint();
    if (!status.ok()) {
      (void)impl->connection.close();
      ::unlink(file.c_str());
      for (const char* suffix : {"-wal", "-shm"}) ::unlink((file.string() + suffix).c_str());
      return status;
    }
    return std::unique_ptr<StoreWriter>(new StoreWriter(std::move(impl)));
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::OutOfMemory, "out of memory creating " + file.string()};
  } catch (...) {
    return Status{StatusCode::Internal, "unexpected failure creating " + file.string()};
  }
}

// The public entry points only add the no-throw guarantee: std::string and the containers
// may throw bad_alloc, which becomes a Status here.
#define SYNCOPATE_NOTHROW(expr)                                                   \
  try {                                                                           \
    return expr;                                                                  \
  } catch (const std::bad_alloc&) {                                               \
    return Status{StatusCode::OutOfMemory, "out of memory writing the store"};    \
  } catch (...) {                                                                 \
    return Status{StatusCode::Internal, "unexpected failure writing the store"};  \
  }

const std::filesystem::path& StoreWriter::path() const noexcept { return impl_->path; }

Status StoreWriter::setMeta(std::string_view key, std::string_view value) noexcept {
  SYNCOPATE_NOTHROW(([&] {
    if (Status s = impl_->usable(); !s.ok()) return s;
    impl_->meta[std::string(key)] = std::string(value);
    impl_->state_dirty = true;
    return Status{};
  })())
}

Status StoreWriter::append(ThreadId thread, std::span<const Record> records) noexcept {
  SYNCOPATE_NOTHROW(impl_->appendRecords(thread, records))
}

namespace {
Status invalidRow(std::string_view what) {
  return {StatusCode::InvalidArgument, std::string(what) + " row has no name (name_id 0)"};
}
}  // namespace

Status StoreWriter::writeApiCall(const ApiCallRow& row) noexcept {
  if (row.name_id == kNoString) return invalidRow("an api_calls");
  SYNCOPATE_NOTHROW(impl_->writeRow(row))
}

Status StoreWriter::writeOp(const OpRow& row) noexcept {
  if (row.name_id == kNoString) return invalidRow("an ops");
  SYNCOPATE_NOTHROW(impl_->writeRow(row))
}

Status StoreWriter::writeCollective(const CollectiveRow& row) noexcept {
  SYNCOPATE_NOTHROW(impl_->writeRow(row))
}

Status StoreWriter::writeOpArg(const OpArgRow& row) noexcept {
  SYNCOPATE_NOTHROW(impl_->writeRow(row))
}

Status StoreWriter::writeNvtxRange(const NvtxRangeRow& row) noexcept {
  if (row.name_id == kNoString) return invalidRow("an nvtx_ranges");
  SYNCOPATE_NOTHROW(impl_->writeRow(row))
}

Status StoreWriter::writeAllocation(const AllocationRow& row) noexcept {
  SYNCOPATE_NOTHROW(impl_->writeRow(row))
}

Status StoreWriter::setCounter(std::string_view name, std::int64_t value) noexcept {
  SYNCOPATE_NOTHROW(([&] {
    if (Status s = impl_->usable(); !s.ok()) return s;
    auto& slot = impl_->counters[std::string(name)];
    if (slot != value) impl_->state_dirty = true;
    slot = value;
    return Status{};
  })())
}

Status StoreWriter::addCounter(std::string_view name, std::int64_t delta) noexcept {
  SYNCOPATE_NOTHROW(([&] {
    if (Status s = impl_->usable(); !s.ok()) return s;
    impl_->counters[std::string(name)] += delta;
    impl_->state_dirty = impl_->state_dirty || delta != 0;
    return Status{};
  })())
}

Status StoreWriter::addDiagnostic(Severity severity, std::string_view source, std::string_view message,
                                  std::optional<std::int64_t> first_ns) noexcept {
  return countDiagnostic(severity, source, message, 1, first_ns);
}

Status StoreWriter::countDiagnostic(Severity severity, std::string_view source, std::string_view message,
                                    std::int64_t count, std::optional<std::int64_t> first_ns) noexcept {
  if (count < 0) return {StatusCode::InvalidArgument, "a diagnostic's count cannot be negative"};
  SYNCOPATE_NOTHROW(([&] {
    if (Status s = impl_->usable(); !s.ok()) return s;
    DiagnosticRow& d = impl_->diagnostic(severity, source, message);
    d.count += count;
    if (first_ns && (!d.first_ns || *first_ns < *d.first_ns)) d.first_ns = first_ns;
    impl_->state_dirty = true;
    return Status{};
  })())
}

Status StoreWriter::flush() noexcept { SYNCOPATE_NOTHROW(impl_->flush(false)) }

Status StoreWriter::setRank(std::int32_t rank) noexcept { SYNCOPATE_NOTHROW(impl_->setRank(rank)) }

Status StoreWriter::close() noexcept { SYNCOPATE_NOTHROW(impl_->close()) }

WriterStats StoreWriter::stats() const noexcept { return impl_->stats; }

}  // namespace syncopate::trace
