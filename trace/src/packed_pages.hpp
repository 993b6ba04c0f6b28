// The big tables' rows packed into pages (schema 2): the writer's fast path and the reader's.
//
// A SQLite row per event costs the writer about a microsecond (binding, building the record,
// inserting into the B-tree) and the disk 30-40 bytes; a recording makes millions. So the rows
// of api_calls, ops, op_args and nvtx_ranges are stored kRowsPerPage at a time, one row of
// <table>_pages per page: for every column of the table, the page's smallest value (`c_base`)
// and every row's difference from it in decimal digits, as many as the largest one needs
// (`c`, row_count fields of width length(c) / row_count, zero-padded; width 0 when
// the column is constant in the page). A column whose values span 10^18 or more keeps them
// whole: c_base 0, each value signed, padded with spaces. A nullable column NULL in some rows
// has `c_nulls`, a bitmap of them in hexadecimal digits (bit k % 4 of digit k / 4 set = row k is
// NULL); one NULL in every row has c_base NULL and an empty `c`. Rowids are first_id + k.
// They are kept as BLOBs of ASCII characters: SQLite finds byte k of a BLOB at once, but must
// count the characters of a TEXT up to it, which made the views quadratic in a page's rows.
// `checksum` is the CRC-32 of the page's bytes in column order: a page larger than a SQLite page
// goes on in overflow pages, which SQLite does not check, so a torn or overwritten one is caught
// here. Decimal text is what SQLite's CAST reads, so the views named after the tables
// (packedViewSql()) decode a value with one CAST and stay small enough for the schema to fit
// in the file's first page, which a store torn anywhere after it still has.
#pragma once

#include <sqlite3.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "store_table.hpp"

namespace syncopate::trace::detail {

template <class Row>
inline constexpr bool kPacked = false;
template <>
inline constexpr bool kPacked<ApiCallRow> = true;
template <>
inline constexpr bool kPacked<OpRow> = true;
template <>
inline constexpr bool kPacked<OpArgRow> = true;
template <>
inline constexpr bool kPacked<NvtxRangeRow> = true;

// Rows per page: large enough that a page's own cost (a SQLite row, the bases) vanishes per row,
// small enough that a store torn at its end loses little with its last page.
inline constexpr std::size_t kRowsPerPage = 4096;
// What a reader accepts: what the writer writes, so that a damaged row_count cannot make a page
// stand for more rows than any writer puts in one.
inline constexpr std::int64_t kMaxRowsPerPage = static_cast<std::int64_t>(kRowsPerPage);

inline constexpr std::string_view kPagesSuffix = "_pages";

template <class Row>
std::string pagesTable() {
  return std::string(StoreTable<Row>::name) + std::string(kPagesSuffix);
}

// A column's value as its 64 bits (nullopt: NULL), and back.
template <class T>
std::optional<std::int64_t> bitsOf(const T& v) noexcept {
  static_assert(std::is_integral_v<T> || std::is_enum_v<T>);
  return static_cast<std::int64_t>(v);
}
template <class T>
std::optional<std::int64_t> bitsOf(const std::optional<T>& v) noexcept {
  if (!v) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}
template <class T>
void setBits(T& out, std::optional<std::int64_t> v) noexcept {
  out = static_cast<T>(v.value_or(0));
}
template <class T>
void setBits(std::optional<T>& out, std::optional<std::int64_t> v) noexcept {
  if (v) {
    out = static_cast<T>(*v);
  } else {
    out.reset();
  }
}

// Calls fn(column, get, set) for every stored column of Row in order (the rowid is not stored:
// it is first_id + k), get(row) -> optional<int64_t>, set(row, optional<int64_t>).
template <class Row, class Fn>
[[gnu::always_inline]] inline void forEachPackedColumn(Fn&& fn) {
  StoreTable<Row>::forEachField([&](const auto& field) {
    using F = std::remove_cvref_t<decltype(field)>;
    if constexpr (std::is_same_v<F, RowidField<Row>>) {
      return;
    } else if constexpr (std::is_same_v<F, Dim3Field<Row>>) {
      const auto member = field.member;
      const auto part = [&](const Column& column, std::uint32_t Dim3::*axis) {
        fn(
            column,
            [member, axis](const Row& row) -> std::optional<std::int64_t> {
              const std::optional<Dim3>& d = row.*member;
              if (!d) return std::nullopt;
              return std::int64_t{(*d).*axis};
            },
            [member, axis](Row& row, std::optional<std::int64_t> v) {
              std::optional<Dim3>& d = row.*member;
              if (!v) {
                d.reset();
                return;
              }
              if (!d) d.emplace();
              (*d).*axis = static_cast<std::uint32_t>(*v);
            });
      };
      part(field.x, &Dim3::x);
      part(field.y, &Dim3::y);
      part(field.z, &Dim3::z);
    } else {
      const auto member = field.member;
      fn(
          field.column, [member](const Row& row) { return bitsOf(row.*member); },
          [member](Row& row, std::optional<std::int64_t> v) { setBits(row.*member, v); });
    }
  });
}

template <class Row>
constexpr int packedColumnCount() {
  int n = 0;
  forEachColumn<Row>(true, [&](const Column&) { ++n; });
  return n;
}

// "first_id,row_count,c_base,c[,c_nulls],...": the page table's columns, in the order the
// writer binds them and the reader reads them.
template <class Row>
std::string pageColumnList() {
  std::string list = "first_id,row_count,checksum";
  forEachColumn<Row>(true, [&](const Column& c) {
    const std::string name(c.name);
    list += "," + name + "_base," + name;
    if (c.nullable()) list += "," + name + "_nulls";
  });
  return list;
}

template <class Row>
std::string pageInsertSql() {
  std::string sql = "INSERT OR REPLACE INTO " + pagesTable<Row>() + "(" + pageColumnList<Row>() + ") VALUES(?,?,?";
  forEachColumn<Row>(true, [&](const Column& c) { sql += c.nullable() ? ",?,?,?" : ",?,?"; });
  return sql + ")";
}

// Differences below this are kept as such; wider columns keep their values (up to 20 characters).
inline constexpr std::uint64_t kMaxDifference = 1'000'000'000'000'000'000ULL;
inline constexpr int kMaxWidth = 20;
inline constexpr char kHexDigits[] = "0123456789ABCDEF";

inline std::int64_t checksum(const char* bytes, std::size_t size) noexcept {
  uLong crc = crc32(0, nullptr, 0);
  while (size > 0) {  // zlib counts in 32 bits
    const auto chunk = static_cast<uInt>(std::min<std::size_t>(size, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes), chunk);
    bytes += chunk;
    size -= chunk;
  }
  return static_cast<std::int64_t>(crc);
}

// Binds a page of `rows` (1..kRowsPerPage) starting at rowid `first_id` to a pageInsertSql()
// statement. The bytes stay in the encoder until the next bind, so SQLite need not copy them.
template <class Row>
class PageEncoder {
 public:
  void bind(sqlite3_stmt* s, std::int64_t first_id, std::span<const Row> rows) {
    const std::size_t n = rows.size();
    bytes_.resize(static_cast<std::size_t>(packedColumnCount<Row>()) * (kMaxWidth * n + (n + 3) / 4));
    char* out = bytes_.data();
    int param = 1;
    sqlite3_bind_int64(s, param++, first_id);
    sqlite3_bind_int64(s, param++, static_cast<std::int64_t>(n));
    const int checksum_param = param++;
    forEachPackedColumn<Row>([&](const Column& column, const auto& get, const auto&) {
      bool any = false, nulls = false;
      std::int64_t lo = 0, hi = 0;
      for (const Row& row : rows) {
        const std::optional<std::int64_t> v = get(row);
        if (!v) {
          nulls = true;
        } else if (!any) {
          lo = hi = *v;
          any = true;
        } else {
          lo = std::min(lo, *v);
          hi = std::max(hi, *v);
        }
      }
      if (!any) {  // NULL in every row
        sqlite3_bind_null(s, param++);
        sqlite3_bind_zeroblob(s, param++, 0);
        if (column.nullable()) sqlite3_bind_null(s, param++);
        return;
      }
      char* values = out;
      if (static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) < kMaxDifference) {
        const std::uint64_t range = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
        int width = 0;
        for (std::uint64_t r = range; r != 0; r /= 10) ++width;
        for (const Row& row : rows) {
          std::uint64_t x = static_cast<std::uint64_t>(get(row).value_or(lo)) - static_cast<std::uint64_t>(lo);
          for (int d = width - 1; d >= 0; --d, x /= 10) out[d] = static_cast<char>('0' + x % 10);
          out += width;
        }
        sqlite3_bind_int64(s, param++, lo);
      } else {  // the values themselves, right-aligned
        int width = 0;
        char text[24];
        for (const std::int64_t v : {lo, hi}) width = std::max(width, static_cast<int>(std::to_chars(text, text + 24, v).ptr - text));
        for (const Row& row : rows) {
          const std::optional<std::int64_t> v = get(row);
          const int length = v ? static_cast<int>(std::to_chars(text, text + 24, *v).ptr - text) : 0;
          std::fill(out, out + width - length, ' ');
          std::copy(text, text + length, out + width - length);
          out += width;
        }
        sqlite3_bind_int64(s, param++, 0);
      }
      sqlite3_bind_blob(s, param++, values, static_cast<int>(out - values), SQLITE_STATIC);
      if (!column.nullable()) return;
      if (!nulls) {
        sqlite3_bind_null(s, param++);
        return;
      }
      char* digits = out;
      for (std::size_t k = 0; k < n; k += 4) {
        unsigned nibble = 0;
        for (std::size_t b = 0; b < 4 && k + b < n; ++b) nibble |= (get(rows[k + b]) ? 0u : 1u) << b;
        *out++ = kHexDigits[nibble];
      }
      sqlite3_bind_blob(s, param++, digits, static_cast<int>(out - digits), SQLITE_STATIC);
    });
    sqlite3_bind_int64(s, checksum_param, checksum(bytes_.data(), static_cast<std::size_t>(out - bytes_.data())));
  }

 private:
  std::vector<char> bytes_;
};

// One column of a page being read.
struct PageColumn {
  const char* values = nullptr;
  const char* nulls = nullptr;  // nullptr: no row is NULL
  std::uint64_t base = 0;
  int width = 0;
  bool all_null = false;
};

// A field of a page: its digits, or (a wide column) its spaces then its signed value. false when
// it is neither (damage).
inline bool readField(const char* p, int width, std::uint64_t& x) noexcept {
  const char* end = p + width;
  while (p < end && *p == ' ') ++p;
  if (p == end) {
    x = 0;
    return true;
  }
  std::int64_t v = 0;
  const auto [stop, error] = std::from_chars(p, end, v);
  if (error != std::errc{} || stop != end) return false;
  x = static_cast<std::uint64_t>(v);
  return true;
}

inline int hexValue(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads the page at the statement's current result row (its first columns pageColumnList<Row>())
// and calls fn(row) for each of its rows, in order. `next_id` is the least rowid the page may
// start at (pages follow one another without overlapping), moved past it. false when the page
// is malformed (a damaged store): a row count out of bounds, a column whose text does not divide
// into its rows, a bitmap of the wrong size, a checksum that does not agree (then nothing is
// handed over), or a field that is not a number (only damage that kept the checksum can leave
// one: the page then ends before it).
template <class Row, class Fn>
bool readPage(sqlite3_stmt* s, std::int64_t& next_id, Row& row, Fn&& fn) {
  constexpr int kColumns = packedColumnCount<Row>();
  const std::int64_t first_id = sqlite3_column_int64(s, 0);
  const std::int64_t n = sqlite3_column_int64(s, 1);
  if (n < 1 || n > kMaxRowsPerPage || first_id < next_id || first_id > INT64_MAX - n) return false;
  PageColumn columns[kColumns];
  int at = 3, c = 0;
  bool valid = true;
  uLong crc = crc32(0, nullptr, 0);
  const auto sum = [&](const char* p, int bytes) {
    if (bytes > 0) crc = crc32(crc, reinterpret_cast<const Bytef*>(p), static_cast<uInt>(bytes));
  };
  forEachColumn<Row>(true, [&](const Column& column) {
    PageColumn& pc = columns[c++];
    const bool base_null = sqlite3_column_type(s, at) == SQLITE_NULL;
    pc.base = static_cast<std::uint64_t>(sqlite3_column_int64(s, at));
    pc.values = static_cast<const char*>(sqlite3_column_blob(s, at + 1));
    const int bytes = sqlite3_column_bytes(s, at + 1);
    sum(pc.values, bytes);
    at += 2;
    if (column.nullable()) {
      if (sqlite3_column_type(s, at) != SQLITE_NULL) {
        pc.nulls = static_cast<const char*>(sqlite3_column_blob(s, at));
        const int nulls = sqlite3_column_bytes(s, at);
        sum(pc.nulls, nulls);
        valid = valid && nulls == (n + 3) / 4 && std::all_of(pc.nulls, pc.nulls + nulls, [](char digit) { return hexValue(digit) >= 0; });
      }
      ++at;
    }
    pc.all_null = base_null;
    valid = valid && (base_null ? column.nullable() && bytes == 0 : bytes % n == 0 && bytes / n <= kMaxWidth);
    pc.width = static_cast<int>(bytes / n);
  });
  if (!valid || static_cast<std::int64_t>(crc) != sqlite3_column_int64(s, 2)) return false;
  next_id = first_id + n;
  for (std::int64_t k = 0; k < n; ++k) {
    if constexpr (requires(Row& r) { r.id; }) row.id = first_id + k;
    int i = 0;
    forEachPackedColumn<Row>([&](const Column&, const auto&, const auto& set) {
      const PageColumn& pc = columns[i++];
      std::uint64_t x = 0;
      if (pc.all_null || (pc.nulls != nullptr && ((hexValue(pc.nulls[k / 4]) >> (k % 4)) & 1) != 0)) {
        set(row, std::nullopt);
      } else if (readField(pc.values + k * pc.width, pc.width, x)) {
        set(row, static_cast<std::int64_t>(pc.base + x));
      } else {
        valid = false;
      }
    });
    if (!valid) return false;
    fn(row);
  }
  return true;
}

// The views that decode each packed table's pages in SQL, named after the tables.
std::string packedViewSql();

}  // namespace syncopate::trace::detail
