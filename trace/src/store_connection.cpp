#include "store_connection.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <type_traits>
#include <utility>

#include "packed_pages.hpp"
#include "store_table.hpp"
#include "syncopate/trace/schema.hpp"
#include "syncopate/trace/store_tables.hpp"

namespace syncopate::trace::detail {

namespace {

// 16 KiB pages: fewer page splits and less per-page overhead for append-mostly tables
// (bench/trace_store measures the difference; see docs/trace.md).
constexpr const char* kCreatePragmas = "PRAGMA page_size=16384;";
// A commit survives the death of the process (SIGKILL) in WAL mode with synchronous=NORMAL;
// only a power loss may take the last commits. The cache holds a whole batch (64 MiB).
constexpr const char* kSessionPragmas = "PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536;";

int journalModeCallback(void* out, int columns, char** values, char**) {
  if (columns > 0 && values[0] != nullptr) *static_cast<std::string*>(out) = values[0];
  return 0;
}

}  // namespace

Status StoreConnection::create(const std::filesystem::path& file) {
  doing_ = "cannot write " + file.string();
  // O_EXCL makes "never replace a store" atomic; SQLite treats the empty file as a new database.
  const int fd = ::open(file.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return errnoStatus(errno, "cannot create " + file.string());
  ::close(fd);
  Status status = open(file, /*fresh=*/true);
  if (!status.ok()) {
    (void)close();
    ::unlink(file.c_str());
    for (const char* suffix : {"-wal", "-shm", "-journal"}) ::unlink((file.string() + suffix).c_str());
  }
  return status;
}

Status StoreConnection::reopen(const std::filesystem::path& file) {
  doing_ = "cannot write " + file.string();
  Status status = open(file, /*fresh=*/false);
  if (!status.ok()) (void)close();
  return status;
}

Status StoreConnection::open(const std::filesystem::path& file, bool fresh) {
  const int rc = sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
                                 nullptr);
  if (rc != SQLITE_OK) return sqliteStatus(db_, rc, "cannot open " + file.string());
  sqlite3_busy_timeout(db_, 2000);
  if (fresh) {
    if (Status s = exec(db_, kCreatePragmas, doing_); !s.ok()) return s;
    const std::string app_id = "PRAGMA application_id=" + std::to_string(kApplicationId) + ";";
    if (Status s = exec(db_, app_id.c_str(), doing_); !s.ok()) return s;
  }
  std::string mode;
  const int wal_rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL;", journalModeCallback, &mode, nullptr);
  if (wal_rc != SQLITE_OK) return sqliteStatus(db_, wal_rc, doing_);
  // Filesystems without shared memory refuse WAL; the rollback journal is slower but just as
  // safe against SIGKILL, so the store is still written (the writer notes it in diagnostics).
  wal_ = mode == "wal";
  if (Status s = exec(db_, kSessionPragmas, doing_); !s.ok()) return s;
  if (fresh) {
    const std::string schema = "BEGIN;\n" + std::string(schemaSql()) + packedViewSql() + "COMMIT;";
    if (Status s = exec(db_, schema.c_str(), doing_); !s.ok()) return s;
  }
  if (wal_) checkpointer_ = WalCheckpointer::start(file, db_);
  return prepareStatements();
}

namespace {

// "c=IFNULL(excluded.c,c)": an upsert's update that keeps what the new row does not know.
std::string keepKnown(std::string_view column) {
  const std::string c(column);
  return c + "=IFNULL(excluded." + c + "," + c + ")";
}

}  // namespace

Status StoreConnection::prepareStatements() {
  WriteStatements& s = statements_;
  const auto batched = [&]<class Row>(std::type_identity<Row>, BatchedInsert& insert) {
    Status st = prepare(db_, insertSql<Row>("INSERT", 1), insert.one, doing_);
    if (st.ok()) st = prepare(db_, insertSql<Row>("INSERT", kRowsPerInsert), insert.many, doing_);
    return st;
  };
  namespace allocations = columns::allocations;
  namespace channels = columns::nccl_kernel_channels;
  const std::string free_allocation = "UPDATE " + std::string(tableName(Table::Allocations)) + " SET " +
                                      std::string(allocations::free_ns) + "=? WHERE " + std::string(allocations::id) + "=?";
  // A channel's start and stop arrive as separate records, in either order: one row, which each
  // fills in with what it knows.
  const std::string merge_channel = insertSql<NcclKernelChannelRow>("INSERT", 1) + " ON CONFLICT(" +
                                    std::string(channels::correlation_id) + "," + std::string(channels::channel) +
                                    ") DO UPDATE SET " + keepKnown(channels::start_timer) + "," +
                                    keepKnown(channels::end_timer);
  const std::pair<Statement*, std::string> single[] = {
      {&s.allocation, insertSql<AllocationRow>("INSERT", 1)},
      {&s.free_allocation, free_allocation},
      {&s.nccl_op, insertSql<NcclOpRow>("INSERT OR REPLACE", 1)},
      {&s.nccl_kernel_channel, merge_channel},
      {&s.string, insertSql<StringRow>("INSERT OR REPLACE", 1)},
      {&s.stream, insertSql<StreamRow>("INSERT OR REPLACE", 1)},
      {&s.thread, insertSql<ThreadRow>("INSERT OR REPLACE", 1)},
      {&s.device, insertSql<DeviceRow>("INSERT OR REPLACE", 1)},
      {&s.communicator, insertSql<CommunicatorRow>("INSERT OR REPLACE", 1)},
      {&s.meta, insertSql<MetaRow>("INSERT OR REPLACE", 1)},
      {&s.counter, insertSql<CounterRow>("INSERT OR REPLACE", 1)},
      {&s.diagnostic, insertSql<DiagnosticRow>("INSERT OR REPLACE", 1)},
  };
  Status st = batched(std::type_identity<CollectiveRow>{}, s.collective);
  const std::pair<Statement*, std::string> pages[] = {
      {&s.api_call_page, pageInsertSql<ApiCallRow>()},
      {&s.op_page, pageInsertSql<OpRow>()},
      {&s.op_arg_page, pageInsertSql<OpArgRow>()},
      {&s.nvtx_page, pageInsertSql<NvtxRangeRow>()},
  };
  for (const auto& [statement, sql] : pages) {
    if (st.ok()) st = prepare(db_, sql, *statement, doing_);
  }
  for (const auto& [statement, sql] : single) {
    if (st.ok()) st = prepare(db_, sql, *statement, doing_);
  }
  return st;
}

Status StoreConnection::checkpoint() {
  if (db_ == nullptr || !wal_) return {};
  std::unique_lock<std::mutex> exclusive;
  if (checkpointer_) exclusive = std::unique_lock(checkpointer_->checkpointMutex());
  const int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
  if (rc != SQLITE_OK) return sqliteStatus(db_, rc, doing_);
  return {};
}

Status StoreConnection::close() {
  statements_ = WriteStatements{};
  checkpointer_.reset();
  if (db_ == nullptr) return {};
  // close_v2 never leaves the handle half-open: if something still held it, SQLite would
  // finish closing once that is released.
  const int rc = sqlite3_close_v2(db_);
  Status status;
  if (rc != SQLITE_OK) status = sqliteStatus(nullptr, rc, doing_);
  db_ = nullptr;
  return status;
}

}  // namespace syncopate::trace::detail
