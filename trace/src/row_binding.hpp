// Binding a row of each batched table to the parameters of an INSERT, starting at parameter
// `first` (1-based), in the column order of the statements in store_connection.cpp.
#pragma once

#include <sqlite3.h>

#include "syncopate/trace/rows.hpp"

namespace syncopate::trace::detail {

constexpr int columnsOf(const ApiCallRow&) { return 7; }
constexpr int columnsOf(const OpRow&) { return 17; }
constexpr int columnsOf(const CollectiveRow&) { return 12; }
constexpr int columnsOf(const OpArgRow&) { return 3; }
constexpr int columnsOf(const NvtxRangeRow&) { return 8; }

void bindRow(sqlite3_stmt* s, int first, const ApiCallRow& r);
void bindRow(sqlite3_stmt* s, int first, const OpRow& r);
void bindRow(sqlite3_stmt* s, int first, const CollectiveRow& r);
void bindRow(sqlite3_stmt* s, int first, const OpArgRow& r);
void bindRow(sqlite3_stmt* s, int first, const NvtxRangeRow& r);

}  // namespace syncopate::trace::detail
