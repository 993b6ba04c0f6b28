// Small helpers over the SQLite C API shared by the writer and the reader: owned
// statements, and turning SQLite result codes into Statuses whose message names the file and
// says what to do. Rows are bound and read by row_binding.hpp.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "syncopate/trace/status.hpp"

namespace syncopate::trace::detail {

struct StatementDeleter {
  void operator()(sqlite3_stmt* statement) const noexcept { sqlite3_finalize(statement); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

// The Status for a failed SQLite call: `doing` says what was attempted, e.g.
// "cannot write runs/a/rank-0.sqlite". Uses the extended code and the OS errno behind it.
Status sqliteStatus(sqlite3* db, int rc, std::string_view doing);
StatusCode statusCodeFor(int rc, int sys_errno) noexcept;
// The Status for a failed system call with `err` (an errno value).
Status errnoStatus(int err, std::string_view doing);

Status prepare(sqlite3* db, std::string_view sql, Statement& out, std::string_view doing);
Status exec(sqlite3* db, const char* sql, std::string_view doing);

inline void bindInt(sqlite3_stmt* s, int index, std::int64_t value) noexcept { sqlite3_bind_int64(s, index, value); }

}  // namespace syncopate::trace::detail
