// The writer's SQLite connection: creating a store file without ever replacing one, the
// pragmas every store is written with, the schema, and the prepared statements.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <string>

#include "sqlite_util.hpp"
#include "wal_checkpointer.hpp"
#include "syncopate/trace/status.hpp"

namespace syncopate::trace::detail {

// collectives take their rows in groups of kRowsPerInsert per INSERT: SQLite's cost per
// statement (opening a cursor, halting the VM) then falls on 32 rows instead of one. (The big
// tables are packed into pages instead: packed_pages.hpp.)
inline constexpr int kRowsPerInsert = 32;
struct BatchedInsert {
  Statement one;   // INSERT ... VALUES(?,...)
  Statement many;  // INSERT ... VALUES(?,...),(?,...),... kRowsPerInsert times
};

// Every statement binds a row of its table with bindRow() (row_binding.hpp), except the pages
// (PageEncoder::bind) and free_allocation (free_ns, then id).
struct WriteStatements {
  Statement api_call_page, op_page, op_arg_page, nvtx_page;
  BatchedInsert collective;
  Statement allocation, free_allocation;
  Statement nccl_op, nccl_kernel_channel;
  Statement string, stream, thread, device, communicator;
  Statement meta, counter, diagnostic;
};

class StoreConnection {
 public:
  StoreConnection() = default;
  ~StoreConnection() { (void)close(); }
  StoreConnection(const StoreConnection&) = delete;
  StoreConnection& operator=(const StoreConnection&) = delete;

  // Creates `file` (failing with AlreadyExists if it is there), sets it up as an empty store
  // of the current schema, and leaves the connection open. On failure no file is left.
  Status create(const std::filesystem::path& file);
  // Opens an existing store written by this library (after a rename).
  Status reopen(const std::filesystem::path& file);

  // Moves everything in the WAL into the main file and empties the WAL.
  Status checkpoint();
  // Finalizes the statements and closes; the WAL is then folded in and removed by SQLite.
  Status close();

  sqlite3* db() const noexcept { return db_; }
  WriteStatements& statements() noexcept { return statements_; }
  const std::string& doing() const noexcept { return doing_; }  // "cannot write <file>"
  bool walMode() const noexcept { return wal_; }

 private:
  Status open(const std::filesystem::path& file, bool fresh);
  Status prepareStatements();

  sqlite3* db_ = nullptr;
  std::unique_ptr<WalCheckpointer> checkpointer_;  // while db_ is open in WAL mode, where it could start
  WriteStatements statements_;
  std::string doing_;
  bool wal_ = false;
};

}  // namespace syncopate::trace::detail
