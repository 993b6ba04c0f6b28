// The names of the run store's tables and columns, as declared once in store_tables.inc. Code
// that writes its own SQL against a store (the analyzer's column-subset SELECTs) takes every
// name from here, so that a column renamed in the declaration cannot be missed: the old name
// no longer compiles.
#pragma once

#include <cstdint>
#include <string_view>

namespace syncopate::trace {

// Every table, in the order the schema creates them.
enum class Table : std::uint8_t {
#define SYNCOPATE_TABLE(Name, table, Enumerator, added_in_minor, comment) Enumerator,
#include "syncopate/trace/store_tables.inc"
};

constexpr std::string_view tableName(Table table) noexcept {
  switch (table) {
#define SYNCOPATE_TABLE(Name, table, Enumerator, added_in_minor, comment) \
  case Table::Enumerator: return #table;
#include "syncopate/trace/store_tables.inc"
  }
  return "unknown";
}

// columns::<table>::<column>, e.g. columns::ops::stream_id == "stream_id"; a launch grid or
// block is three columns, columns::ops::grid_x and so on.
namespace columns {
#define SYNCOPATE_TABLE(Name, table, Enumerator, added_in_minor, comment) namespace table {
#define SYNCOPATE_COLUMN(field, Type, init, sql, comment) inline constexpr std::string_view field = #field;
#define SYNCOPATE_ROWID(field, comment) inline constexpr std::string_view field = #field;
#define SYNCOPATE_DIM3(field, comment)                            \
  inline constexpr std::string_view field##_x = #field "_x";      \
  inline constexpr std::string_view field##_y = #field "_y";      \
  inline constexpr std::string_view field##_z = #field "_z";
#define SYNCOPATE_END_TABLE(Name, constraint) }
#include "syncopate/trace/store_tables.inc"
}  // namespace columns

}  // namespace syncopate::trace
