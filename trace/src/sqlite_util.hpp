// Small helpers over the SQLite C API shared by the writer and the reader: owned
// statements, binding of optional values, and turning SQLite result codes into Statuses
// whose message names the file and says what to do.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
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
inline void bindBits(sqlite3_stmt* s, int index, std::uint64_t value) noexcept {
  sqlite3_bind_int64(s, index, static_cast<std::int64_t>(value));  // stored as its bit pattern
}
template <class T>
void bindOptional(sqlite3_stmt* s, int index, const std::optional<T>& value) noexcept {
  if (value) {
    sqlite3_bind_int64(s, index, static_cast<std::int64_t>(*value));
  } else {
    sqlite3_bind_null(s, index);
  }
}
inline void bindText(sqlite3_stmt* s, int index, std::string_view text) noexcept {
  sqlite3_bind_text(s, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}
// Empty text binds NULL (nullable TEXT columns: "not known").
inline void bindTextOrNull(sqlite3_stmt* s, int index, std::string_view text) noexcept {
  if (text.empty()) {
    sqlite3_bind_null(s, index);
  } else {
    bindText(s, index, text);
  }
}

}  // namespace syncopate::trace::detail
