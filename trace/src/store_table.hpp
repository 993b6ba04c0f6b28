// The run store's tables as the code that writes their SQL sees them: for each row type, its
// table's name and comment and its fields in column order, each with the column(s) it is kept
// in, all made from the one declaration (store_tables.inc) and visited at compile time. The
// DDL, the INSERTs, the SELECTs, the bindings and the column reads are derived from this.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "syncopate/trace/rows.hpp"

namespace syncopate::trace::detail {

// A column as the DDL declares it.
struct Column {
  std::string_view name;
  std::string_view sql;      // its type and constraints, e.g. "INTEGER NOT NULL"
  std::string_view comment;  // what the DDL says after it; empty for none

  constexpr bool nullable() const {
    return sql.find("NOT NULL") == std::string_view::npos && sql.find("PRIMARY KEY") == std::string_view::npos;
  }
};

// A field of a row and where the store keeps it.
template <class Row, class T>
struct Field {  // one column
  T Row::*member;
  Column column;
};
template <class Row>
struct Dim3Field {  // three columns, all NULL when the Dim3 is not known
  std::optional<Dim3> Row::*member;
  Column x, y, z;
};
template <class Row>
struct RowidField {  // the rowid SQLite assigns when the row is inserted: read, never written
  std::int64_t Row::*member;
  Column column;
};

template <class Row, class T>
constexpr std::array<Column, 1> columnsOf(const Field<Row, T>& f) { return {f.column}; }
template <class Row>
constexpr std::array<Column, 3> columnsOf(const Dim3Field<Row>& f) { return {f.x, f.y, f.z}; }
template <class Row>
constexpr std::array<Column, 1> columnsOf(const RowidField<Row>& f) { return {f.column}; }

template <class F>
constexpr bool isWritten(const F&) { return true; }
template <class Row>
constexpr bool isWritten(const RowidField<Row>&) { return false; }

// StoreTable<Row>: name, comment, the schema minor version that added the table, the table
// constraint, and forEachField(fn), which calls fn with each field's Field, Dim3Field or
// RowidField in column order. forEachField is always inlined: the writer binds every row
// through it, and inlined it compiles to what binds written by hand would (each field's offset
// and column number constant, nothing kept in memory between the calls to SQLite).
template <class Row>
struct StoreTable;

#define SYNCOPATE_TABLE(Name, table, Enumerator, added_in_minor_, comment_) \
  template <>                                                               \
  struct StoreTable<Name##Row> {                                            \
    using Row = Name##Row;                                                  \
    static constexpr std::string_view name = #table;                        \
    static constexpr std::string_view comment = comment_;                   \
    static constexpr int added_in_minor = added_in_minor_;                  \
    template <class Fn>                                                     \
    [[gnu::always_inline]] static constexpr void forEachField(Fn&& fn) {
#define SYNCOPATE_COLUMN(field, Type, init, sql, comment) fn(Field<Row, Type>{&Row::field, {#field, sql, comment}});
#define SYNCOPATE_ROWID(field, comment) fn(RowidField<Row>{&Row::field, {#field, "INTEGER PRIMARY KEY", comment}});
#define SYNCOPATE_DIM3(field, comment)                                                                    \
  fn(Dim3Field<Row>{                                                                                      \
      &Row::field, {#field "_x", "INTEGER", comment}, {#field "_y", "INTEGER", ""}, {#field "_z", "INTEGER", ""}});
#define SYNCOPATE_END_TABLE(Name, constraint_) \
  }                                            \
  static constexpr std::string_view constraint = constraint_; \
  };
#include "syncopate/trace/store_tables.inc"

// Calls fn(std::type_identity<Row>{}) for the row type of every table, in schema order.
template <class Fn>
constexpr void forEachTable(Fn&& fn) {
#define SYNCOPATE_TABLE(Name, table, Enumerator, added_in_minor, comment) fn(std::type_identity<Name##Row>{});
#include "syncopate/trace/store_tables.inc"
}

// Calls fn(const Column&) for every column of Row's table, in order; only for those a writer
// binds when `written_only`.
template <class Row, class Fn>
constexpr void forEachColumn(bool written_only, Fn&& fn) {
  StoreTable<Row>::forEachField([&](const auto& field) {
    if (written_only && !isWritten(field)) return;
    for (const Column& column : columnsOf(field)) fn(column);
  });
}

// How many parameters one row of Row binds.
template <class Row>
constexpr int writtenColumnCount() {
  int n = 0;
  forEachColumn<Row>(true, [&](const Column&) { ++n; });
  return n;
}

// "INSERT INTO table(columns) VALUES(?,...)" with `rows` groups of placeholders; `verb` is
// "INSERT" or "INSERT OR REPLACE".
template <class Row>
std::string insertSql(std::string_view verb, int rows) {
  std::string columns, group = "(";
  forEachColumn<Row>(true, [&](const Column& c) {
    if (!columns.empty()) {
      columns += ',';
      group += ',';
    }
    columns += c.name;
    group += '?';
  });
  group += ')';
  std::string sql = std::string(verb) + " INTO " + std::string(StoreTable<Row>::name) + "(" + columns + ") VALUES";
  for (int r = 0; r < rows; ++r) sql += (r == 0 ? "" : ",") + group;
  return sql;
}

// Every column, comma-separated, in the order readRow() reads them.
template <class Row>
std::string columnList() {
  std::string columns;
  forEachColumn<Row>(false, [&](const Column& c) {
    if (!columns.empty()) columns += ',';
    columns += c.name;
  });
  return columns;
}

// The declaration's promise, checked: a column's C++ type is a std::optional exactly when its
// SQL allows NULL (TEXT excepted: there an empty string stands for NULL).
template <class T>
inline constexpr bool kIsOptional = false;
template <class T>
inline constexpr bool kIsOptional<std::optional<T>> = true;

consteval bool nullabilityAgrees() {
  bool agrees = true;
  forEachTable([&]<class Row>(std::type_identity<Row>) {
    StoreTable<Row>::forEachField([&](const auto& field) {
      if constexpr (requires { field.column; field.member; }) {
        using T = std::remove_cvref_t<decltype(std::declval<Row&>().*field.member)>;
        if constexpr (!std::is_same_v<T, std::string>) agrees = agrees && kIsOptional<T> == field.column.nullable();
      }
    });
  });
  return agrees;
}
static_assert(nullabilityAgrees(), "store_tables.inc: a nullable column needs a std::optional field, and only it");

}  // namespace syncopate::trace::detail
