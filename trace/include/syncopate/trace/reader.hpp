// StoreReader: read-only access to one store, for the analyzer, tuner, GUI and CLI.
//
// open() checks, in this order, and stops at the first failure with a sentence naming the
// file: it exists and is readable; it is a SQLite database (NotAStore); it holds at least a
// header (Corrupt); its application_id is Syncopate's (NotAStore); it is not shorter than
// its header says (Corrupt: truncated); it has meta.schema_version (NotAStore); its schema
// major version is one this build reads (UnsupportedVersion, naming both versions). Damage
// found later while scanning is reported as Corrupt by the scan that met it.
//
// A store torn at its end (its file cut short, or its last pages unreadable) can instead be
// read as far as it goes (TornStores::KeepRowsBefore): it opens although shorter than its
// header says, and a scan that meets damage stops there and succeeds with the rows before it
// (torn_scan.hpp), which tear() lists. Its meta table must still be readable.
//
// Scans call a callback once per row with one reused row object, in insertion order (rowid);
// no allocation per row except for the few text columns of the small tables. A reader may be
// moved to another thread but not used from two at once; open one reader per thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "syncopate/trace/function_ref.hpp"
#include "syncopate/trace/rows.hpp"
#include "syncopate/trace/schema.hpp"
#include "syncopate/trace/status.hpp"
#include "syncopate/trace/store_tables.hpp"
#include "syncopate/trace/torn_scan.hpp"

namespace syncopate::trace {

// How a reader answers a store torn at its end.
enum class TornStores {
  Refuse,          // Corrupt, as any damage
  KeepRowsBefore,  // each table is read up to its first unreadable row
};

// What a reader reading with KeepRowsBefore found torn so far.
struct StoreTear {
  std::uint64_t file_bytes = 0, header_bytes = 0;  // when the file is shorter than its header says; else 0
  std::vector<TornTable> tables;                   // the tables scans stopped short in, each once
};

class StoreReader {
 public:
  static Result<StoreReader> open(const std::filesystem::path& file, TornStores torn = TornStores::Refuse) noexcept;

  StoreReader(StoreReader&&) noexcept;
  StoreReader& operator=(StoreReader&&) noexcept;
  ~StoreReader();

  const std::filesystem::path& path() const noexcept;
  SchemaVersion schemaVersion() const noexcept;

  // Every `meta` row, and the few everyone needs, parsed.
  const std::map<std::string, std::string, std::less<>>& meta() const noexcept;
  std::optional<std::string_view> metaValue(std::string_view key) const noexcept;
  std::optional<std::int32_t> rank() const noexcept;  // nullopt while meta.rank is -1
  std::optional<std::int64_t> pid() const noexcept;
  std::int64_t realtimeOffsetNs() const noexcept;     // 0 when the store does not say

  // The strings table, loaded at open. Empty for kNoString and for ids the store lacks.
  std::string_view string(StringId id) const noexcept;
  std::uint32_t maxStringId() const noexcept;

  Result<std::int64_t> rowCount(Table table) const noexcept;

  // Scans, one per table of store_tables.inc, named after its row struct: forEachOp for OpRow,
  // forEachApiCall for ApiCallRow, ..., forEachDiagnostic for DiagnosticRow. A callback must not
  // throw (it runs between SQLite calls). A table added by a later minor version than the
  // store's (nccl_ops and nccl_kernel_channels, schema 1.1) reads as empty.
#define SYNCOPATE_TABLE(Name, table, Enumerator, added_in_minor, comment) \
  Status forEach##Name(FunctionRef<void(const Name##Row&)> fn) const noexcept;
#include "syncopate/trace/store_tables.inc"

  // With TornStores::KeepRowsBefore: where the store was found torn, by open() and the scans so far.
  const StoreTear& tear() const noexcept;

  // SQLite's quick_check over the whole file (reads every page: for `doctor`-style checks,
  // not for every open). Corrupt with SQLite's first complaint when it fails.
  Status checkIntegrity() const noexcept;

 private:
  struct Impl;
  explicit StoreReader(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace syncopate::trace
