// StoreWriter: the one connection that writes a process's store. Used from a single thread
// (the collector's background thread, or an importer); not thread-safe.
//
// Rows accumulate in an open transaction; flush() first writes whatever the Catalog gained
// since the last flush (strings, streams, threads, devices, communicators), then the
// counters, then commits. So a committed row never refers to an id whose entry is not
// committed, and a process killed with SIGKILL leaves a store that holds exactly the flushed
// batches (WAL mode, synchronous=NORMAL: a commit survives the death of the process).
//
// Nothing here throws. A failed write (disk full, I/O error) rolls the open batch back,
// counts its rows in stats().rows_lost and the counter rows_lost, and returns the Status;
// the writer stays usable, so a later flush succeeds once there is room again.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "syncopate/trace/catalog.hpp"
#include "syncopate/trace/records.hpp"
#include "syncopate/trace/rows.hpp"
#include "syncopate/trace/status.hpp"

namespace syncopate::trace {

// Who writes the store; becomes the first `meta` rows.
struct StoreIdentity {
  std::string host;                   // hostname
  std::int64_t pid = 0;
  std::optional<std::int32_t> rank;   // known at creation, or later through setRank()
  std::string source = "record";      // 'record' | 'import-kineto' | 'import-nsys' | 'synthetic'
};

struct WriterStats {
  std::uint64_t rows_written = 0;    // committed rows of the data tables (ops, api_calls, ...)
  std::uint64_t records_appended = 0;
  std::uint64_t flushes = 0;         // successful commits
  std::uint64_t failed_flushes = 0;
  std::uint64_t rows_lost = 0;       // rows of batches that could not be committed
  std::uint64_t bytes_clamped = 0;   // OpRecords whose byte count did not fit (>= 1 TiB)
  std::uint64_t unknown_references = 0;  // records naming an id the catalog never published
};

class StoreWriter {
 public:
  // Creates DIR/rank-<R>.sqlite when identity.rank is known, else DIR/pid-<P>.sqlite
  // (creating DIR if needed). Fails with AlreadyExists rather than touch an existing store.
  static Result<std::unique_ptr<StoreWriter>> create(const std::filesystem::path& run_dir,
                                                     const StoreIdentity& identity, Catalog& catalog) noexcept;
  // Creates the store at exactly `file` (importers, tests).
  static Result<std::unique_ptr<StoreWriter>> createFile(const std::filesystem::path& file,
                                                         const StoreIdentity& identity, Catalog& catalog) noexcept;

  // Closes (flushing first) if close() was not called; errors are then only counted.
  ~StoreWriter();
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  const std::filesystem::path& path() const noexcept;

  // A `meta` row (insert or replace), written with the current batch. The writer owns
  // schema_version, tool_version, source, host, pid, rank, clock, realtime_offset_ns and
  // start_ns/end_ns; the collector adds backend, backend_reason, command, local_rank,
  // world_size.
  Status setMeta(std::string_view key, std::string_view value) noexcept;

  // Records drained from the buffer of thread `thread` (a catalog ThreadId; kNoThread for
  // buffers that hold no per-thread records, e.g. the CUPTI or event-poller thread).
  Status append(ThreadId thread, std::span<const Record> records) noexcept;

  // Row API (importers): ids in the rows are ignored and assigned by the store; string,
  // stream and thread ids refer to the same Catalog.
  Status writeApiCall(const ApiCallRow& row) noexcept;
  Status writeOp(const OpRow& row) noexcept;
  Status writeCollective(const CollectiveRow& row) noexcept;
  Status writeOpArg(const OpArgRow& row) noexcept;
  Status writeNvtxRange(const NvtxRangeRow& row) noexcept;
  Status writeAllocation(const AllocationRow& row) noexcept;

  // `counters` rows: set replaces, add accumulates; written at every flush.
  Status setCounter(std::string_view name, std::int64_t value) noexcept;
  Status addCounter(std::string_view name, std::int64_t delta) noexcept;

  // A `diagnostics` row; the same (severity, source, message) again only raises its count.
  Status addDiagnostic(Severity severity, std::string_view source, std::string_view message,
                       std::optional<std::int64_t> first_ns = std::nullopt) noexcept;
  // The same, for `count` occurrences at once (an importer's tally of skipped events).
  Status countDiagnostic(Severity severity, std::string_view source, std::string_view message, std::int64_t count,
                         std::optional<std::int64_t> first_ns = std::nullopt) noexcept;

  // Commits everything written since the last flush (see the top of this file).
  Status flush() noexcept;

  // The rank became known: records meta.rank and renames pid-<P>.sqlite to rank-<R>.sqlite
  // (flush, checkpoint the WAL into the main file, close, rename without replacing, reopen).
  // AlreadyExists when rank-<R>.sqlite is taken (the store keeps its pid name); a no-op when
  // the store already has that rank; InvalidArgument for another rank or a negative one.
  Status setRank(std::int32_t rank) noexcept;

  // Sets meta.end_ns, flushes, checkpoints and closes; later calls return the same Status.
  Status close() noexcept;

  WriterStats stats() const noexcept;

 private:
  struct Impl;
  explicit StoreWriter(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace syncopate::trace
