// An importer's side of the trace library: one store written through trace::StoreWriter (so
// imported stores are exactly like recorded ones), with the catalog lookups importers need and
// a count of the rows written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "diagnostic_row.hpp"
#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/importers.hpp"
#include "syncopate/trace/catalog.hpp"
#include "syncopate/trace/writer.hpp"

namespace syncopate::analyzer::import {

class StoreOutput {
 public:
  struct Identity {
    std::string host;
    std::int64_t pid = -1;
    std::int32_t rank = 0;
    std::string source;  // 'import-kineto' | 'import-nsys'
  };
  // Creates DIR/rank-<R>.sqlite; fails if it exists.
  static trace::Result<std::unique_ptr<StoreOutput>> create(const std::filesystem::path& dir, const Identity& identity);

  void registerDevice(std::int32_t ordinal, std::string_view name, std::optional<std::int32_t> sm_count,
                      std::optional<std::int64_t> memory_bytes);
  trace::ThreadId thread(std::int64_t tid, std::string_view name);
  trace::StreamId stream(std::int32_t device, std::int64_t handle);
  trace::EventId event(std::uint64_t handle);
  trace::StringId intern(std::string_view s) { return catalog_.intern(s); }

  trace::Status op(trace::OpRow row, std::string_view name);
  trace::Status apiCall(trace::ApiCallRow row, std::string_view name);
  trace::Status collective(const trace::CollectiveRow& row);
  trace::Status range(std::optional<trace::ThreadId> thread, std::string_view domain, std::string_view name, std::int64_t start,
                      std::int64_t end, std::optional<std::uint32_t> depth = std::nullopt);
  trace::Status allocation(std::int64_t device, std::uint64_t address, std::uint64_t bytes, std::int64_t alloc_ns,
                           std::optional<std::int64_t> free_ns);
  void setMeta(std::string_view key, std::string_view value);
  // A diagnostics row of the store: the list's entry `key`, its {} filled in by `args`. Returns
  // its sentence.
  template <trace::diagnostics::Key key, class... Args>
  std::string diagnostic(std::int64_t count, Args&&... args) {
    trace::DiagnosticRow row = diagnosticRow<key>(std::string(kSource), count, std::forward<Args>(args)...);
    write(row);
    return std::move(row.message);
  }
  // Source events of `what` that have no place in the store, and why.
  void notStored(std::string what, std::int64_t count, std::string why);
  const std::vector<ImportedCategory>& notStoredCategories() const { return not_stored_; }

  // Flushes and closes the store; fills in the file and row counts of `report`.
  trace::Status close(ImportedStore& report);
  // Closes and deletes the store: an import that failed leaves nothing behind.
  void abandon();

 private:
  StoreOutput() = default;
  static constexpr std::string_view kSource = "import";
  trace::Status written(const trace::Status& s, std::int64_t& counter);
  void write(const trace::DiagnosticRow& diagnostic);

  trace::Catalog catalog_;
  std::unique_ptr<trace::StoreWriter> writer_;
  std::unordered_map<std::int64_t, trace::ThreadId> threads_;
  std::int64_t ops_ = 0, api_calls_ = 0, ranges_ = 0, collectives_ = 0, allocations_ = 0, since_flush_ = 0;
  std::vector<ImportedCategory> not_stored_;
  trace::Status first_failure_;
};

}  // namespace syncopate::analyzer::import
