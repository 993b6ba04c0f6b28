// The environment of a recorded job. Launchers pass their environment on to the processes
// they start (mpirun and torchrun locally, srun by default), so LD_PRELOAD reaches every rank;
// Open MPI also forwards the variables named in OMPI_MCA_mca_base_env_list to remote nodes,
// which is what `mpirun -x LD_PRELOAD ...` would do.
#include <unistd.h>

#include <cstdlib>

#include "syncopate/collector/record.hpp"

extern char** environ;

namespace syncopate::collector {
namespace {

// Where the toolkit's CUPTI usually is, for processes that do not find it on their library
// path (the collector tries the library path first, so simgpu's drop-in wins in tests).
std::string findCupti(const Environment& current) {
  std::vector<std::filesystem::path> places;
  for (const char* root : {"CUDA_HOME", "CUDA_PATH"}) {
    if (auto found = current.find(root); found != current.end()) {
      places.push_back(std::filesystem::path(found->second) / "lib64" / "libcupti.so.13");
      places.push_back(std::filesystem::path(found->second) / "extras/CUPTI/lib64" / "libcupti.so.13");
    }
  }
  places.emplace_back("/usr/local/cuda/lib64/libcupti.so.13");
  places.emplace_back("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");
  for (const auto& place : places) {
    if (::access(place.c_str(), R_OK) == 0) return place.string();
  }
  return {};
}

std::string prepended(const std::string& first, const Environment& current, const char* name, char separator) {
  auto found = current.find(name);
  std::string value = first;
  if (found != current.end() && !found->second.empty()) {
    value.push_back(separator);
    value.append(found->second);
  }
  return value;
}

}  // namespace

Environment currentEnvironment() {
  Environment environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string text = *entry;
    auto equals = text.find('=');
    if (equals != std::string::npos) environment[text.substr(0, equals)] = text.substr(equals + 1);
  }
  return environment;
}

Environment recordEnvironment(const RecordOptions& options, const Environment& current, std::vector<std::string>& warnings) {
  Environment changes;
  const std::string library = options.preload_library.string();
  changes["LD_PRELOAD"] = prepended(library, current, "LD_PRELOAD", ':');
  if (auto nvtx = current.find("NVTX_INJECTION64_PATH"); nvtx != current.end() && !nvtx->second.empty() &&
                                                         nvtx->second != library) {
    warnings.push_back("NVTX_INJECTION64_PATH already names " + nvtx->second +
                       " (another tool); NVTX ranges go there and are not recorded");
  } else {
    changes["NVTX_INJECTION64_PATH"] = library;
  }
  changes["SYNCOPATE_OUTPUT_DIR"] = std::filesystem::absolute(options.output_dir).lexically_normal().string();
  changes["SYNCOPATE_BACKEND"] = options.backend;
  changes["SYNCOPATE_ITERATION_MARKER"] = options.iteration_marker;
  changes["SYNCOPATE_ARMED"] = std::string(1, options.armed ? '1' : '0');
  if (std::string cupti = findCupti(current); !cupti.empty()) changes["SYNCOPATE_CUPTI_LIBRARY"] = cupti;
  for (const auto& [name, value] : options.extra) changes[name] = value;

  std::string forwarded;
  for (const auto& [name, value] : changes) {
    if (!forwarded.empty()) forwarded += ';';
    forwarded += name;
  }
  changes["OMPI_MCA_mca_base_env_list"] = prepended(forwarded, current, "OMPI_MCA_mca_base_env_list", ';');
  return changes;
}

}  // namespace syncopate::collector
