// Reading a store torn at its end (its file cut short, or its last pages unreadable: a copy
// stopped halfway, a disk that filled up, a machine that lost power) as far as it goes. A
// table's rows come in rowid order, the order they were written in, so the rows read before
// the first unreadable one are everything written before the tear.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "syncopate/trace/function_ref.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace syncopate::trace {

// A table that could be read only up to its first unreadable row.
struct TornTable {
  std::string table;
  std::int64_t rows_kept = 0;
};

// Opens `file` read-only (sqlite3_open_v2 with `flags` added) to be read up to its tear. SQLite
// refuses a file shorter than its header says whole ("database disk image is malformed"), before
// any table is read: writable_schema makes it take the file's own size, and the file is read
// as ending at its last whole page (a partial page would read back as rows of zeros). A page
// past the end is then damage that SQLite reports where a table reaches it. SQLite's result
// code; `*db` is set as sqlite3_open_v2 sets it (to be closed by the caller, also on failure).
int openUpToTear(const std::string& file, int flags, sqlite3** db) noexcept;

// "SELECT <columns>, rowid FROM <table> ORDER BY rowid": the query stepUntilTorn() reads (the
// order is the table's own; ORDER BY keeps SQLite from reading a covering index instead).
std::string selectUpToTear(std::string_view columns, std::string_view table);

struct PrefixRead {
  std::int64_t rows = 0;  // rows handed over
  int rc = 0;             // SQLite's last result: SQLITE_DONE, SQLITE_CORRUPT, or another failure
  bool torn = false;      // stopped at the first row that could not be read
};

// Steps `statement`, a selectUpToTear() query, handing each row to `row` up to the first that
// cannot be read: SQLite finds its page damaged (a page past the end of a truncated file, a
// page of garbage), or its rowid does not grow (the emptied cells of a page cut in half read as
// rowid 0, and a damaged tree can lead to rows already read). Every row handed over is thus a
// distinct cell of the file, which bounds their number. What `row` throws goes through.
PrefixRead stepUntilTorn(sqlite3_stmt* statement, FunctionRef<void(sqlite3_stmt*)> row);

}  // namespace syncopate::trace
