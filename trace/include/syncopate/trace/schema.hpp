// The store's schema: its version, and schemaSql(), the DDL the writer executes, made from the
// tables' one declaration (store_tables.inc). docs/store-schema.md quotes it verbatim
// (tests/trace checks that they agree).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace syncopate::trace {

// MAJOR changes what existing tables mean or how they are kept (readers refuse unknown majors;
// this build reads 1 and 2); MINOR only adds tables or nullable columns (older readers read
// newer minors).
struct SchemaVersion {
  int major = 0;
  int minor = 0;
  friend constexpr bool operator==(const SchemaVersion&, const SchemaVersion&) = default;
};

inline constexpr SchemaVersion kSchemaVersion{2, 0};
// The oldest major version this build reads (schema 1: every row a SQLite row).
inline constexpr int kOldestReadableMajor = 1;

// SQLite's header field for "which application's file is this": 'SYNC'.
inline constexpr std::int32_t kApplicationId = 0x53594E43;

// "MAJOR.MINOR"
std::string toString(SchemaVersion version);
// Parses "MAJOR.MINOR"; false when `text` is not of that form.
bool parseSchemaVersion(std::string_view text, SchemaVersion& out) noexcept;

// Every CREATE statement of schema kSchemaVersion, in order (made at compile time).
std::string_view schemaSql() noexcept;

// The syncopate version that writes stores and meta.json (the CMake project version).
std::string_view toolVersion() noexcept;

}  // namespace syncopate::trace
