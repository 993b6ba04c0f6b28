// The run directory (docs/store-schema.md): one store per process that used CUDA, named
// rank-<R>.sqlite (or pid-<P>.sqlite until the rank is known), and meta.json for the run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "syncopate/trace/status.hpp"

namespace syncopate::trace {

std::string rankStoreName(std::int32_t rank);  // "rank-<R>.sqlite"
std::string pidStoreName(std::int64_t pid);    // "pid-<P>.sqlite"

struct StoreFile {
  std::filesystem::path path;
  std::optional<std::int32_t> rank;  // from a rank-<R> name
  std::optional<std::int64_t> pid;   // from a pid-<P> name
};

// The stores of a run directory: rank-<R>.sqlite by rank, then pid-<P>.sqlite by pid. Files
// that are not stores by name (SQLite's -wal/-shm, meta.json, analysis results) are skipped.
// NotFound when `run_dir` is not a directory.
Result<std::vector<StoreFile>> listStores(const std::filesystem::path& run_dir) noexcept;

inline constexpr const char* kRunMetaFileName = "meta.json";
inline constexpr int kRunMetaVersion = 1;

// meta.json: facts about the run as a whole, written by `syncopate record` (or an importer).
struct RunMeta {
  std::string tool_version;               // syncopate version that recorded the run
  std::vector<std::string> command;       // the command line, one element per argument
  std::vector<std::string> hosts;         // hostnames that took part, as known
  std::int64_t start_unix_ns = 0;         // wall-clock start (CLOCK_REALTIME)
  std::string backend;                    // 'cupti' | 'events' | 'import' | ...
  std::string backend_reason;             // why that backend
  std::string source = "record";          // as meta.source in the stores
  // Keys this version does not know, kept as JSON text so that rewriting preserves them.
  std::vector<std::pair<std::string, std::string>> extra_json;
};

// Writes DIR/meta.json atomically (a temporary file renamed over it).
// Why a file could not be opened, from its errno: strerror's sentence, except for ELOOP, which
// O_NOFOLLOW returns for a symbolic link: a run directory's files are never written through one,
// since anyone who can write the folder could plant it.
std::string openFailure(int err);

Status writeRunMeta(const std::filesystem::path& run_dir, const RunMeta& meta) noexcept;
// NotFound without meta.json; InvalidArgument (naming the file and the problem) when it is
// not valid JSON of this shape, or of a newer "version".
Result<RunMeta> readRunMeta(const std::filesystem::path& run_dir) noexcept;

}  // namespace syncopate::trace
