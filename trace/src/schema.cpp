#include "syncopate/trace/schema.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <type_traits>

#include "packed_pages.hpp"
#include "store_table.hpp"

#ifndef SYNCOPATE_VERSION
#error "SYNCOPATE_VERSION must be defined by the build (trace/CMakeLists.txt)"
#endif

namespace syncopate::trace {

namespace {

using detail::Column;
using detail::StoreTable;

// Where a column's comment starts in the DDL, so that the comments of a table line up.
constexpr std::size_t kCommentColumn = 33;

// The DDL's text, or (N == 0) only its length: the same code measures it and then writes it.
template <std::size_t N>
struct SchemaText {
  std::array<char, N> chars{};
  std::size_t size = 0;
  std::size_t column = 0;  // characters since the last newline

  constexpr void put(std::string_view text) {
    for (const char c : text) {
      if constexpr (N > 0) chars[size] = c;
      ++size;
      column = c == '\n' ? 0 : column + 1;
    }
  }
  constexpr void putComment(std::string_view comment) {
    do {
      put(" ");
    } while (column < kCommentColumn);
    put("-- ");
    put(comment);
  }
};

// "-- " before every line of a table's comment.
template <class Text>
constexpr void putCommentLines(Text& out, std::string_view comment) {
  while (!comment.empty()) {
    const std::size_t end = std::min(comment.find('\n'), comment.size());
    out.put("-- ");
    out.put(comment.substr(0, end));
    out.put("\n");
    comment.remove_prefix(std::min(end + 1, comment.size()));
  }
}

// The page table of a packed table (packed_pages.hpp): per column its base, its values and, when
// nullable, its NULL bitmap.
template <class Row, class Text>
constexpr void putPages(Text& out) {
  using Declared = StoreTable<Row>;
  out.put("-- its rows packed into pages (see \"Packed pages\"); the view ");
  out.put(Declared::name);
  out.put(" shows its rows\n");
  out.put("CREATE TABLE ");
  out.put(Declared::name);
  out.put(detail::kPagesSuffix);
  out.put("(\n");
  int remaining = 0;
  detail::forEachColumn<Row>(true, [&](const Column&) { ++remaining; });
  // One line: "  <name><suffix> <sql>," and its comment; ");" after the last.
  const auto line = [&](std::string_view name, std::string_view suffix, std::string_view sql, bool last,
                        std::string_view comment) {
    out.put("  ");
    out.put(name);
    out.put(suffix);
    out.put(" ");
    out.put(sql);
    out.put(last ? ");" : ",");
    if (!comment.empty()) out.putComment(comment);
    out.put("\n");
  };
  line("first_id", "", "INTEGER PRIMARY KEY", false, "rowid of the page's first row; row k is first_id + k");
  line("row_count", "", "INTEGER NOT NULL", false, "");
  line("checksum", "", "INTEGER NOT NULL", false, "CRC-32 of the page's blobs, in column order");
  detail::forEachColumn<Row>(true, [&](const Column& column) {
    const bool last = --remaining == 0;
    line(column.name, "_base", "INTEGER", false, column.comment);
    line(column.name, "", "BLOB NOT NULL", last && !column.nullable(), "");
    if (column.nullable()) line(column.name, "_nulls", "BLOB", last, "");
  });
}

// Every table of store_tables.inc as a CREATE TABLE statement, one column a line with its
// comment, tables apart by a blank line.
template <class Text>
constexpr void putSchema(Text& out) {
  bool first = true;
  detail::forEachTable([&]<class Row>(std::type_identity<Row>) {
    using Declared = StoreTable<Row>;
    if (!first) out.put("\n");
    first = false;
    putCommentLines(out, Declared::comment);
    if constexpr (detail::kPacked<Row>) {
      putPages<Row>(out);
      return;
    }
    out.put("CREATE TABLE ");
    out.put(Declared::name);
    out.put("(\n");
    int remaining = 0;
    detail::forEachColumn<Row>(false, [&](const Column&) { ++remaining; });
    detail::forEachColumn<Row>(false, [&](const Column& column) {
      out.put("  ");
      out.put(column.name);
      out.put(" ");
      out.put(column.sql);
      out.put(--remaining == 0 && Declared::constraint.empty() ? ");" : ",");
      if (!column.comment.empty()) out.putComment(column.comment);
      out.put("\n");
    });
    if (!Declared::constraint.empty()) {
      out.put("  ");
      out.put(Declared::constraint);
      out.put(");\n");
    }
  });
}

constexpr std::size_t kSchemaSize = [] {
  SchemaText<0> measure;
  putSchema(measure);
  return measure.size;
}();

// Made at compile time: docs/store-schema.md quotes it verbatim between its ```sql fences, and
// tests/trace/schema_doc_test.cpp fails when the two differ.
constexpr SchemaText<kSchemaSize> kSchema = [] {
  SchemaText<kSchemaSize> text;
  putSchema(text);
  return text;
}();

}  // namespace

std::string toString(SchemaVersion version) {
  return std::to_string(version.major) + "." + std::to_string(version.minor);
}

bool parseSchemaVersion(std::string_view text, SchemaVersion& out) noexcept {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == text.size()) return false;
  SchemaVersion v;
  const char* end = text.data() + text.size();
  auto [major_end, major_err] = std::from_chars(text.data(), text.data() + dot, v.major);
  if (major_err != std::errc{} || major_end != text.data() + dot || v.major < 0) return false;
  auto [minor_end, minor_err] = std::from_chars(text.data() + dot + 1, end, v.minor);
  if (minor_err != std::errc{} || minor_end != end || v.minor < 0) return false;
  out = v;
  return true;
}

std::string_view schemaSql() noexcept { return {kSchema.chars.data(), kSchema.size}; }

std::string_view toolVersion() noexcept { return SYNCOPATE_VERSION; }

}  // namespace syncopate::trace
