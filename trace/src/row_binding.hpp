// A row's fields into a statement's parameters (the writer) and out of a result row's columns
// (the reader), in the column order of the table's declaration (store_table.hpp), so that they
// always agree with insertSql() and selectSql(). Integers, enums, ids and 64-bit values stored
// by their bits are bound as SQLite integers; std::nullopt as NULL; an empty string as NULL in
// a nullable TEXT column.
#pragma once

#include <sqlite3.h>

#include <optional>
#include <string>
#include <type_traits>

#include "store_table.hpp"

namespace syncopate::trace::detail {

template <class T>
void bindValue(sqlite3_stmt* s, int i, const T& value, const Column&) noexcept {
  static_assert(std::is_integral_v<T> || std::is_enum_v<T>);
  sqlite3_bind_int64(s, i, static_cast<std::int64_t>(value));  // 64-bit unsigned values: their bits
}
template <class T>
void bindValue(sqlite3_stmt* s, int i, const std::optional<T>& value, const Column& column) noexcept {
  if (value) {
    bindValue(s, i, *value, column);
  } else {
    sqlite3_bind_null(s, i);
  }
}
inline void bindValue(sqlite3_stmt* s, int i, const std::string& text, const Column& column) noexcept {
  if (text.empty() && column.nullable()) {
    sqlite3_bind_null(s, i);  // "not known"
  } else {
    sqlite3_bind_text(s, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
}

template <class Row, class T>
int bindField(sqlite3_stmt* s, int i, const Field<Row, T>& f, const Row& row) noexcept {
  bindValue(s, i, row.*f.member, f.column);
  return i + 1;
}
template <class Row>
int bindField(sqlite3_stmt* s, int i, const Dim3Field<Row>& f, const Row& row) noexcept {
  const std::optional<Dim3>& d = row.*f.member;
  if (d) {
    bindValue(s, i, d->x, f.x);
    bindValue(s, i + 1, d->y, f.y);
    bindValue(s, i + 2, d->z, f.z);
  } else {
    for (int k = 0; k < 3; ++k) sqlite3_bind_null(s, i + k);
  }
  return i + 3;
}
template <class Row>
int bindField(sqlite3_stmt*, int i, const RowidField<Row>&, const Row&) noexcept {
  return i;  // SQLite assigns it
}

// Binds the writtenColumnCount<Row>() parameters of `row` from parameter `first` (1-based).
template <class Row>
void bindRow(sqlite3_stmt* s, int first, const Row& row) noexcept {
  int i = first;
  StoreTable<Row>::forEachField([&](const auto& field) { i = bindField(s, i, field, row); });
}

template <class T>
void readValue(sqlite3_stmt* s, int i, T& out) noexcept {
  static_assert(std::is_integral_v<T> || std::is_enum_v<T>);
  out = static_cast<T>(sqlite3_column_int64(s, i));
}
template <class T>
void readValue(sqlite3_stmt* s, int i, std::optional<T>& out) noexcept {
  if (sqlite3_column_type(s, i) == SQLITE_NULL) {
    out.reset();
  } else {
    readValue(s, i, out.emplace());
  }
}
// NULL reads as an empty string. May throw bad_alloc (the reader turns it into a Status).
inline void readValue(sqlite3_stmt* s, int i, std::string& out) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  if (text == nullptr) {
    out.clear();
  } else {
    out.assign(text, static_cast<std::size_t>(sqlite3_column_bytes(s, i)));
  }
}

template <class Row, class T>
int readField(sqlite3_stmt* s, int i, const Field<Row, T>& f, Row& row) {
  readValue(s, i, row.*f.member);
  return i + 1;
}
template <class Row>
int readField(sqlite3_stmt* s, int i, const Dim3Field<Row>& f, Row& row) noexcept {
  std::optional<Dim3>& d = row.*f.member;
  if (sqlite3_column_type(s, i) == SQLITE_NULL) {
    d.reset();
  } else {
    d = Dim3{static_cast<std::uint32_t>(sqlite3_column_int64(s, i)),
             static_cast<std::uint32_t>(sqlite3_column_int64(s, i + 1)),
             static_cast<std::uint32_t>(sqlite3_column_int64(s, i + 2))};
  }
  return i + 3;
}
template <class Row>
int readField(sqlite3_stmt* s, int i, const RowidField<Row>& f, Row& row) noexcept {
  row.*f.member = sqlite3_column_int64(s, i);
  return i + 1;
}

// Reads a result row whose first columns are columnList<Row>() into `row`.
template <class Row>
void readRow(sqlite3_stmt* s, Row& row) {
  int i = 0;
  StoreTable<Row>::forEachField([&](const auto& field) { i = readField(s, i, field, row); });
}

}  // namespace syncopate::trace::detail
