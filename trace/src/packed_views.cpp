// The views that show packed pages (packed_pages.hpp) as the tables they hold, in SQLite's own
// SQL, so that any `sqlite3` shell or binding reads a store without Syncopate's library:
//   SELECT count(*) FROM ops WHERE kind = 1
// Each page row is spread into its rows by json_each over an array of row_count elements (the
// one table-valued function every SQLite build has); a value is its page's base plus a CAST of
// its decimal field. Slower than the library, which reads the pages directly, but it needs
// nothing loaded.
#include <string>
#include <type_traits>

#include "packed_pages.hpp"

namespace syncopate::trace::detail {

namespace {

// The value of row r.key of a page's column `c`: its base plus its field, which CAST reads
// (digits, or spaces and a signed number); NULL where the column's bitmap says so, or where
// its base is NULL (NULL in every row).
std::string decodeValue(const std::string& c, bool nullable) {
  const std::string width = "length(p." + c + ")/p.row_count";
  // A column constant in the page has an empty BLOB, whose substr is NULL: its fields are 0.
  const std::string value =
      "p." + c + "_base+IFNULL(CAST(substr(p." + c + ",r.key*" + width + "+1," + width + ") AS INTEGER),0)";
  if (!nullable) return value;
  return "CASE WHEN(instr('0123456789ABCDEF',substr(p." + c + "_nulls,r.key/4+1,1))-1)>>(r.key%4)&1 THEN NULL ELSE " +
         value + " END";
}

template <class Row>
std::string viewOf() {
  std::string select;
  StoreTable<Row>::forEachField([&](const auto& field) {
    using F = std::remove_cvref_t<decltype(field)>;
    if (!select.empty()) select += ",\n  ";
    if constexpr (std::is_same_v<F, RowidField<Row>>) {
      select += "p.first_id+r.key AS " + std::string(field.column.name);
    } else {
      bool first = true;
      for (const Column& c : columnsOf(field)) {
        if (!first) select += ",\n  ";
        first = false;
        const std::string name(c.name);
        select += decodeValue(name, c.nullable()) + " AS " + name;
      }
    }
  });
  return "CREATE VIEW " + std::string(StoreTable<Row>::name) + " AS SELECT\n  " + select + "\nFROM " + pagesTable<Row>() +
         " AS p, json_each('['||substr(replace(hex(zeroblob(p.row_count)),'00',',0'),2)||']') AS r;\n";
}

}  // namespace

std::string packedViewSql() {
  std::string sql;
  forEachTable([&]<class Row>(std::type_identity<Row>) {
    if constexpr (kPacked<Row>) sql += viewOf<Row>();
  });
  return sql;
}

}  // namespace syncopate::trace::detail
