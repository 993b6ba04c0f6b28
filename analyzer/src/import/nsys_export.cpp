#include "nsys_export.hpp"

namespace syncopate::analyzer::import {

std::string_view stripVersion(std::string_view name) {
  const auto at = name.rfind("_v");
  if (at == std::string_view::npos || at + 2 >= name.size()) return name;
  for (std::size_t i = at + 2; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, at);
}

trace::Result<NsysExport> NsysExport::open(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return trace::failure("cannot read " + file.string() + ": no such file");
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  NsysExport e(file, raw);
  if (rc != SQLITE_OK) return trace::failure("cannot open " + file.string() + ": " + sqlite3_errmsg(raw));
  auto tables = e.query("SELECT name FROM sqlite_master WHERE type = 'table'");
  if (!tables) return trace::failure(file.string() + " is not an SQLite database (an Nsight Systems export is made with "
                                                     "'nsys export --type sqlite REPORT.nsys-rep')");
  while (sqlite3_step(tables->get()) == SQLITE_ROW) e.tables_.insert(text(tables->get(), 0));
  if (!e.has("StringIds"))
    return trace::failure(file.string() + " is an SQLite database but not an Nsight Systems export (no StringIds table)");
  return e;
}

trace::Result<Statement> NsysExport::query(const std::string& sql) const {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_.get(), sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
    return trace::failure(file_.string() + ": " + sqlite3_errmsg(db_.get()) + " (in: " + sql + ")");
  return Statement(s);
}

std::set<std::string> NsysExport::columns(const std::string& table) const {
  std::set<std::string> have;
  if (!has(table)) return have;
  if (auto info = query("PRAGMA table_info(" + table + ")"))
    while (sqlite3_step(info->get()) == SQLITE_ROW) have.insert(text(info->get(), 1));
  return have;
}

trace::Status NsysExport::requireColumns(const std::string& table, std::initializer_list<const char*> columns) const {
  const std::set<std::string> have = this->columns(table);
  for (const char* c : columns)
    if (!have.count(c))
      return trace::failure(file_.string() + ": table " + table + " has no column " + c +
                            " (an Nsight Systems version this importer does not know)");
  return {};
}

trace::Status NsysExport::stepError(int rc) const {
  return trace::failure(file_.string() + " is damaged: " + sqlite3_errstr(rc) + " (" + sqlite3_errmsg(db_.get()) + ")");
}

std::string NsysExport::text(sqlite3_stmt* s, int col) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, col));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s, col))) : std::string();
}

std::optional<std::int64_t> NsysExport::optInt(sqlite3_stmt* s, int col) {
  if (sqlite3_column_type(s, col) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(s, col);
}

}  // namespace syncopate::analyzer::import
