// `syncopate import`: turning other tools' traces into run stores (one per rank), written
// through the trace library's writer exactly as recorded runs are, so that imported runs go
// through the same loading and analysis. docs/analyzer.md maps each source format to the store.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/run_loader.hpp"

namespace syncopate::analyzer {

// What happened to one kind of source event.
struct ImportedCategory {
  std::string what;       // e.g. "X kernel", "s ac2g", "i cpu_instant_event"
  std::int64_t events = 0;
  std::string stored_as;  // "ops", "api_calls", "nvtx_ranges", "allocations", "correlation ids",
                          // "meta", or "not stored: <why>"
};

struct ImportedStore {
  std::filesystem::path file;        // the store written
  std::filesystem::path source;      // the file it came from
  std::int32_t rank = -1;
  std::int64_t source_events = 0;
  std::vector<ImportedCategory> categories;
  // Rows written, per table.
  std::int64_t ops = 0, api_calls = 0, nvtx_ranges = 0, collectives = 0, allocations = 0;
  std::int64_t derived_event_records = 0;  // event record ops reconstructed from sync events
  std::int64_t not_stored = 0;             // source events with no place in the store
  std::vector<std::string> warnings;       // what the user must hear at once (a trace cut off), also in the store's diagnostics
};

struct ImportReport {
  std::vector<ImportedStore> stores;
};

struct ImportOptions {
  ProgressFn progress;  // called once per file read and per file written
};

// PyTorch profiler / Kineto Chrome traces (.json or .json.gz), one file per rank. The rank
// comes from each file's distributedInfo (else from its position in `files`). `out_dir` must
// not hold a store of the same rank already.
trace::Result<ImportReport> importKineto(std::span<const std::filesystem::path> files, const std::filesystem::path& out_dir,
                                         const ImportOptions& options = {});

// Nsight Systems SQLite exports (`nsys export --type sqlite`), one file per process.
trace::Result<ImportReport> importNsys(std::span<const std::filesystem::path> files, const std::filesystem::path& out_dir,
                                       const ImportOptions& options = {});

}  // namespace syncopate::analyzer
