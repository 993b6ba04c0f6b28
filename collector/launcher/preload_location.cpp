// Where the collector library is, and the run directory a recording writes into.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <system_error>

#include "syncopate/collector/record.hpp"
#include "syncopate/trace/run_dir.hpp"

namespace syncopate::collector {

using trace::Result;
using trace::Status;
using trace::StatusCode;

Result<std::filesystem::path> findPreloadLibrary() {
  if (const char* named = std::getenv("SYNCOPATE_PRELOAD_LIBRARY"); named != nullptr && *named != '\0') {
    std::filesystem::path path = named;
    if (::access(path.c_str(), R_OK) == 0) return std::filesystem::absolute(path);
    return Status(StatusCode::NotFound, "SYNCOPATE_PRELOAD_LIBRARY names " + path.string() + ", which cannot be read");
  }
  std::error_code ec;
  std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return Status(StatusCode::NotFound, "cannot tell where this executable is (" + ec.message() + ")");
  std::filesystem::path candidate = executable.parent_path().parent_path() / "lib" / "libsyncopate_preload.so";
  if (::access(candidate.c_str(), R_OK) == 0) return candidate;
  return Status(StatusCode::NotFound, "the collector library libsyncopate_preload.so is not at " + candidate.string() +
                                          "; build it (target syncopate_preload) or set SYNCOPATE_PRELOAD_LIBRARY");
}

namespace {

// Launchers set one of these in every rank: several `syncopate record` then share one
// directory on purpose.
bool insideLaunchedRank() {
  for (const char* name : {"SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

}  // namespace

Status prepareRunDirectory(const std::filesystem::path& directory) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) {
    return Status(StatusCode::PermissionDenied,
                  "cannot create " + directory.string() + " (" + ec.message() + "); choose another directory with -o");
  }
  if (!std::filesystem::is_directory(directory)) {
    return Status(StatusCode::InvalidArgument, directory.string() + " is not a directory; choose another with -o");
  }
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    return Status(StatusCode::PermissionDenied,
                  "cannot write into " + directory.string() + "; choose a writable directory with -o");
  }
  if (!insideLaunchedRank()) {
    auto stores = trace::listStores(directory);
    if (stores.ok() && !stores->empty()) {
      return Status(StatusCode::AlreadyExists, directory.string() + " already holds a recording (" +
                                                   stores->front().path.filename().string() +
                                                   "); choose a new directory with -o or remove it");
    }
  }
  return Status{};
}

}  // namespace syncopate::collector
