// One struct per table of the run store, made from the tables' declaration
// (store_tables.inc, which says what each column holds): one field per column, in column order,
// std::optional where the column is nullable, a Dim3 for the three columns of a launch grid or
// block. The reader hands them to per-row callbacks (one reused object per table scan, no
// allocation per row); importers write them with StoreWriter's row API. A field the store
// assigns (a rowid) is ignored when a row is written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "syncopate/trace/ids.hpp"
#include "syncopate/trace/types.hpp"

namespace syncopate::trace {

#define SYNCOPATE_TABLE(Name, table, Enumerator, added_in_minor, comment) struct Name##Row {
#define SYNCOPATE_COLUMN(field, Type, init, sql, comment) Type field = init;
#define SYNCOPATE_ROWID(field, comment) std::int64_t field = 0;
#define SYNCOPATE_DIM3(field, comment) std::optional<Dim3> field = {};
#define SYNCOPATE_END_TABLE(Name, constraint)                           \
  friend bool operator==(const Name##Row&, const Name##Row&) = default; \
  };
#include "syncopate/trace/store_tables.inc"

}  // namespace syncopate::trace
