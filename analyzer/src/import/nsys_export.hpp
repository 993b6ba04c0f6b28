// Read-only access to an Nsight Systems SQLite export (`nsys export --type sqlite`), by table
// and column name: the schema grows between Nsight versions, so the importer asks for the
// columns it reads and for nothing else.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "syncopate/trace/status.hpp"

namespace syncopate::analyzer::import {

// Nsight Systems' serialized ids: the process id sits in bits 24..47 of globalPid/globalTid,
// the thread id in bits 0..23 of globalTid.
inline std::int64_t pidOf(std::int64_t global) { return (global >> 24) & 0xFFFFFF; }
inline std::int64_t tidOf(std::int64_t global) { return global & 0xFFFFFF; }

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": Nsight appends the API version.
std::string_view stripVersion(std::string_view name);

struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

class NsysExport {
 public:
  // Fails with a sentence when `file` is missing, not SQLite, or not an Nsight export.
  static trace::Result<NsysExport> open(const std::filesystem::path& file);

  bool has(const std::string& table) const { return tables_.count(table) > 0; }
  const std::filesystem::path& file() const { return file_; }

  trace::Result<Statement> query(const std::string& sql) const;
  // The columns of `table` (empty when it does not exist).
  std::set<std::string> columns(const std::string& table) const;
  // Whether `table` has every one of `columns`; else a sentence naming the first missing one.
  trace::Status requireColumns(const std::string& table, std::initializer_list<const char*> columns) const;
  // Runs `sql` and calls row(stmt) for each row; fails on damage or on row's failure.
  template <class Row>
  trace::Status scan(const std::string& sql, Row row) const {
    auto q = query(sql);
    if (!q) return q.status();
    int rc;
    while ((rc = sqlite3_step(q->get())) == SQLITE_ROW)
      if (trace::Status s = row(q->get()); !s) return s;
    return rc == SQLITE_DONE ? trace::Status{} : stepError(rc);
  }
  trace::Status stepError(int rc) const;

  static std::string text(sqlite3_stmt* s, int col);
  static std::optional<std::int64_t> optInt(sqlite3_stmt* s, int col);

 private:
  struct DbCloser {
    void operator()(sqlite3* db) const { sqlite3_close(db); }
  };
  NsysExport(std::filesystem::path file, sqlite3* db) : file_(std::move(file)), db_(db) {}
  std::filesystem::path file_;
  std::unique_ptr<sqlite3, DbCloser> db_;
  std::set<std::string> tables_;
};

}  // namespace syncopate::analyzer::import
