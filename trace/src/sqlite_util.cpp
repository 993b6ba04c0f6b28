#include "sqlite_util.hpp"

#include <cerrno>
#include <cstring>

#include "syncopate/trace/run_dir.hpp"

namespace syncopate::trace::detail {

StatusCode statusCodeFor(int rc, int sys_errno) noexcept {
  if (sys_errno == ENOSPC || sys_errno == EDQUOT || sys_errno == EFBIG) return StatusCode::DiskFull;
  switch (rc & 0xFF) {
    case SQLITE_FULL: return StatusCode::DiskFull;
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH: return StatusCode::PermissionDenied;
    case SQLITE_CANTOPEN:
      if (sys_errno == EACCES || sys_errno == EPERM || sys_errno == EROFS) return StatusCode::PermissionDenied;
      if (sys_errno == ENOENT || sys_errno == ENOTDIR) return StatusCode::NotFound;
      return StatusCode::IoError;
    case SQLITE_NOTADB: return StatusCode::NotAStore;
    case SQLITE_CORRUPT: return StatusCode::Corrupt;
    case SQLITE_NOMEM: return StatusCode::OutOfMemory;
    case SQLITE_MISUSE:
    case SQLITE_INTERNAL:
    case SQLITE_RANGE: return StatusCode::Internal;
    default: return StatusCode::IoError;
  }
}

Status sqliteStatus(sqlite3* db, int rc, std::string_view doing) {
  const int sys_errno = db != nullptr ? sqlite3_system_errno(db) : 0;
  const StatusCode code = statusCodeFor(rc, sys_errno);
  std::string message(doing);
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (sys_errno != 0 && code != StatusCode::Corrupt && code != StatusCode::NotAStore) {
    message += " (";
    message += std::strerror(sys_errno);
    message += ")";
  }
  switch (code) {
    case StatusCode::DiskFull: message += "; free some space or write to another directory"; break;
    case StatusCode::PermissionDenied: message += "; check the directory's permissions"; break;
    default: break;
  }
  return {code, std::move(message)};
}

Status errnoStatus(int err, std::string_view doing) {
  StatusCode code = StatusCode::IoError;
  switch (err) {
    case EACCES:
    case EPERM:
    case EROFS: code = StatusCode::PermissionDenied; break;
    case ENOENT:
    case ENOTDIR: code = StatusCode::NotFound; break;
    case EEXIST: code = StatusCode::AlreadyExists; break;
    case ENOSPC:
    case EDQUOT: code = StatusCode::DiskFull; break;
    case ENOMEM: code = StatusCode::OutOfMemory; break;
    default: break;
  }
  std::string message(doing);
  message += ": ";
  message += openFailure(err);
  return {code, std::move(message)};
}

Status prepare(sqlite3* db, std::string_view sql, Statement& out, std::string_view doing) {
  sqlite3_stmt* statement = nullptr;
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                    &statement, nullptr);
  out.reset(statement);
  if (rc != SQLITE_OK) return sqliteStatus(db, rc, doing);
  return {};
}

Status exec(sqlite3* db, const char* sql, std::string_view doing) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return sqliteStatus(db, rc, doing);
  return {};
}

}  // namespace syncopate::trace::detail
