// StoreReader: read-only access to one store, for the analyzer, tuner, GUI and CLI.
//
// open() checks, in this order, and stops at the first failure with a sentence naming the
// file: it exists and is readable; it is a SQLite database (NotAStore); it holds at least a
// header (Corrupt); its application_id is Syncopate's (NotAStore); it is not shorter than
// its header says (Corrupt: truncated); it has meta.schema_version (NotAStore); its schema
// major version is one this build reads (UnsupportedVersion, naming both versions). Damage
// found later while scanning is reported as Corrupt by the scan that met it.
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

#include "syncopate/trace/function_ref.hpp"
#include "syncopate/trace/rows.hpp"
#include "syncopate/trace/schema.hpp"
#include "syncopate/trace/status.hpp"

namespace syncopate::trace {

enum class Table : std::uint8_t {
  Strings,
  Devices,
  Threads,
  Streams,
  ApiCalls,
  Ops,
  Collectives,
  OpArgs,
  Allocations,
  Communicators,
  NvtxRanges,
  Counters,
  Diagnostics,
  NcclOps,             // schema 1.1; absent from older stores (read as empty)
  NcclKernelChannels,  // schema 1.1; absent from older stores (read as empty)
};
std::string_view tableName(Table table) noexcept;

class StoreReader {
 public:
  static Result<StoreReader> open(const std::filesystem::path& file) noexcept;

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

  // Scans; a callback must not throw (it runs between SQLite calls).
  Status forEachApiCall(FunctionRef<void(const ApiCallRow&)> fn) const noexcept;
  Status forEachOp(FunctionRef<void(const OpRow&)> fn) const noexcept;
  Status forEachCollective(FunctionRef<void(const CollectiveRow&)> fn) const noexcept;
  Status forEachOpArg(FunctionRef<void(const OpArgRow&)> fn) const noexcept;
  Status forEachNvtxRange(FunctionRef<void(const NvtxRangeRow&)> fn) const noexcept;
  Status forEachAllocation(FunctionRef<void(const AllocationRow&)> fn) const noexcept;
  Status forEachStream(FunctionRef<void(const StreamRow&)> fn) const noexcept;
  Status forEachDevice(FunctionRef<void(const DeviceRow&)> fn) const noexcept;
  Status forEachThread(FunctionRef<void(const ThreadRow&)> fn) const noexcept;
  Status forEachCommunicator(FunctionRef<void(const CommunicatorRow&)> fn) const noexcept;
  Status forEachCounter(FunctionRef<void(const CounterRow&)> fn) const noexcept;
  // NCCL profiler plugin data (schema 1.1); a store written before has none, and scans nothing.
  Status forEachNcclOp(FunctionRef<void(const NcclOpRow&)> fn) const noexcept;
  Status forEachNcclKernelChannel(FunctionRef<void(const NcclKernelChannelRow&)> fn) const noexcept;
  Status forEachDiagnostic(FunctionRef<void(const DiagnosticRow&)> fn) const noexcept;

  // SQLite's quick_check over the whole file (reads every page: for `doctor`-style checks,
  // not for every open). Corrupt with SQLite's first complaint when it fails.
  Status checkIntegrity() const noexcept;

 private:
  struct Impl;
  explicit StoreReader(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace syncopate::trace
