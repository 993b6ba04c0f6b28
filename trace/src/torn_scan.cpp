#include "syncopate/trace/torn_scan.hpp"

#include <sqlite3.h>

#include "whole_pages_vfs.hpp"

namespace syncopate::trace {

int openUpToTear(const std::string& file, int flags, sqlite3** db) noexcept {
  *db = nullptr;
  const char* vfs = detail::wholePagesVfs();
  if (vfs == nullptr) return SQLITE_ERROR;
  const int rc = sqlite3_open_v2(file.c_str(), db, flags | SQLITE_OPEN_READONLY, vfs);
  if (rc != SQLITE_OK) return rc;
  return sqlite3_exec(*db, "PRAGMA writable_schema=ON", nullptr, nullptr, nullptr);
}

std::string selectUpToTear(std::string_view columns, std::string_view table) {
  return "SELECT " + std::string(columns) + ", rowid FROM " + std::string(table) + " ORDER BY rowid";
}

PrefixRead stepUntilTorn(sqlite3_stmt* statement, FunctionRef<void(sqlite3_stmt*)> row) {
  const int rowid_column = sqlite3_column_count(statement) - 1;
  PrefixRead read;
  bool first = true;
  sqlite3_int64 last = 0;
  while ((read.rc = sqlite3_step(statement)) == SQLITE_ROW) {
    const sqlite3_int64 rowid = sqlite3_column_int64(statement, rowid_column);
    if (!first && rowid <= last) {
      read.torn = true;
      return read;
    }
    first = false;
    last = rowid;
    row(statement);
    ++read.rows;
  }
  read.torn = (read.rc & 0xff) == SQLITE_CORRUPT;
  return read;
}

}  // namespace syncopate::trace
