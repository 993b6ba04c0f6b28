#include "store_connection.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "syncopate/trace/schema.hpp"

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
    const std::string schema = "BEGIN;\n" + std::string(schemaSql()) + "COMMIT;";
    if (Status s = exec(db_, schema.c_str(), doing_); !s.ok()) return s;
  }
  return prepareStatements();
}

namespace {

// "INSERT INTO table(columns) VALUES(?,..)" with `rows` groups of placeholders.
std::string insertSql(const char* table, const std::string& columns, int rows) {
  const auto count = 1 + std::count(columns.begin(), columns.end(), ',');
  std::string group = "(";
  for (long i = 0; i < count; ++i) group += i == 0 ? "?" : ",?";
  group += ")";
  std::string sql = std::string("INSERT INTO ") + table + "(" + columns + ") VALUES";
  for (int r = 0; r < rows; ++r) sql += (r == 0 ? "" : ",") + group;
  return sql;
}

}  // namespace

Status StoreConnection::prepareStatements() {
  WriteStatements& s = statements_;
  struct Batched {
    BatchedInsert* insert;
    const char* table;
    const char* columns;
  };
  const Batched batched[] = {
      {&s.api_call, "api_calls", "thread_id,domain,name_id,start_ns,end_ns,correlation_id,result"},
      {&s.op, "ops",
       "kind,device_id,stream_id,name_id,start_ns,end_ns,correlation_id,bytes,memcpy_kind,"
       "grid_x,grid_y,grid_z,block_x,block_y,block_z,event_id,sync_kind"},
      {&s.collective, "collectives",
       "correlation_id,comm_id,comm_rank,comm_size,seq,coll_type,dtype,red_op,count,bytes,root_or_peer,group_id"},
      {&s.op_arg, "op_args", "correlation_id,arg_index,address"},
      {&s.nvtx, "nvtx_ranges", "thread_id,domain_id,name_id,start_ns,end_ns,depth,color,category"},
  };
  for (const Batched& b : batched) {
    if (Status st = prepare(db_, insertSql(b.table, b.columns, 1), b.insert->one, doing_); !st.ok()) return st;
    if (Status st = prepare(db_, insertSql(b.table, b.columns, kRowsPerInsert), b.insert->many, doing_); !st.ok()) {
      return st;
    }
  }
  struct Sql {
    Statement* statement;
    const char* text;
  };
  const Sql single[] = {
      {&s.allocation,
       "INSERT INTO allocations(id,device_id,address,bytes,kind,alloc_ns,free_ns) VALUES(?,?,?,?,?,?,?)"},
      {&s.free_allocation, "UPDATE allocations SET free_ns=? WHERE id=?"},
      {&s.nccl_op,
       "INSERT OR REPLACE INTO nccl_ops(correlation_id,func_id,nccl_seq,algorithm_id,protocol_id,channels,warps) "
       "VALUES(?,?,?,?,?,?,?)"},
      // A channel's start and stop arrive as separate records, in either order: one row.
      {&s.nccl_kernel_start,
       "INSERT INTO nccl_kernel_channels(correlation_id,channel,start_timer) VALUES(?,?,?) "
       "ON CONFLICT(correlation_id,channel) DO UPDATE SET start_timer=excluded.start_timer"},
      {&s.nccl_kernel_end,
       "INSERT INTO nccl_kernel_channels(correlation_id,channel,end_timer) VALUES(?,?,?) "
       "ON CONFLICT(correlation_id,channel) DO UPDATE SET end_timer=excluded.end_timer"},
      {&s.string, "INSERT OR REPLACE INTO strings(id,value) VALUES(?,?)"},
      {&s.stream, "INSERT OR REPLACE INTO streams(id,device_id,handle,flags,priority,name) VALUES(?,?,?,?,?,?)"},
      {&s.thread, "INSERT OR REPLACE INTO threads(id,tid,name) VALUES(?,?,?)"},
      {&s.device,
       "INSERT OR REPLACE INTO devices(id,name,uuid,pci_bus_id,sm_count,memory_bytes) VALUES(?,?,?,?,?,?)"},
      {&s.communicator,
       "INSERT OR REPLACE INTO communicators(comm_id,comm_rank,comm_size,device_id,handle,init_ns,parent_comm_id) "
       "VALUES(?,?,?,?,?,?,?)"},
      {&s.meta, "INSERT OR REPLACE INTO meta(key,value) VALUES(?,?)"},
      {&s.counter, "INSERT OR REPLACE INTO counters(name,value) VALUES(?,?)"},
      {&s.diagnostic,
       "INSERT OR REPLACE INTO diagnostics(id,severity,source,message,count,first_ns) VALUES(?,?,?,?,?,?)"},
  };
  for (const Sql& sql : single) {
    if (Status st = prepare(db_, sql.text, *sql.statement, doing_); !st.ok()) return st;
  }
  return {};
}

Status StoreConnection::checkpoint() {
  if (db_ == nullptr || !wal_) return {};
  const int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
  if (rc != SQLITE_OK) return sqliteStatus(db_, rc, doing_);
  return {};
}

Status StoreConnection::close() {
  statements_ = WriteStatements{};
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
