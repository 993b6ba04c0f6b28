// Owning handles of a SQLite connection and statement, for the analyzer's own SQLite files
// (the stores' rows, the results it writes and reads back).
#pragma once

#include <sqlite3.h>

#include <memory>

namespace syncopate::analyzer {

struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct SqliteFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using SqliteDb = std::unique_ptr<sqlite3, SqliteCloser>;
using SqliteStmt = std::unique_ptr<sqlite3_stmt, SqliteFinalizer>;

}  // namespace syncopate::analyzer
