// The environment of a recorded job. Launchers pass their environment on to the processes
// they start on the local node (mpirun, torchrun, srun by default), so LD_PRELOAD reaches every
// local rank. For remote nodes Open MPI forwards only what it is told to: `-x NAME` options
// on its command line, or the names in OMPI_MCA_mca_base_env_list — but never both (it refuses
// to start), so the job's own choice decides which one the recording adds to.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
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

std::string ncclProfilerRequest(const RecordOptions& options, const Environment& current) {
  if (!options.nccl_profiler) return "off";
  if (auto set = current.find("NCCL_PROFILER_PLUGIN"); set != current.end() && !set->second.empty() &&
                                                         set->second != options.preload_library.string()) {
    return "left to the job: " + set->second;
  }
  return "collector";
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
  // NCCL (>= 2.23, and simgpu's) loads its profiler plugin from NCCL_PROFILER_PLUGIN: the
  // already-preloaded library, so NCCL's dlopen finds the instance that records.
  if (const std::string request = ncclProfilerRequest(options, current); request == "collector") {
    changes["NCCL_PROFILER_PLUGIN"] = library;
  } else if (request != "off") {
    warnings.push_back("NCCL_PROFILER_PLUGIN already names " + current.at("NCCL_PROFILER_PLUGIN") +
                       " (the job's own); left alone, so NCCL's algorithm, protocol and kernel timing are not recorded");
  }
  // NCCL (>= 2.19, and simgpu's) loads its tuner plugin from NCCL_TUNER_PLUGIN: the same library
  // (preload/nccl_tuner_plugin.cpp), which records NCCL's per-channel bandwidth and applies a
  // plan's channel counts, and otherwise leaves NCCL's choices alone.
  if (auto tuner = current.find("NCCL_TUNER_PLUGIN"); tuner != current.end() && !tuner->second.empty() &&
                                                      tuner->second != library) {
    warnings.push_back("NCCL_TUNER_PLUGIN already names " + tuner->second +
                       " (the job's own); left alone, so NCCL's per-channel bandwidth is not recorded and a plan's "
                       "channel counts are not applied");
  } else {
    changes["NCCL_TUNER_PLUGIN"] = library;
  }
  changes["SYNCOPATE_OUTPUT_DIR"] = std::filesystem::absolute(options.output_dir).lexically_normal().string();
  changes["SYNCOPATE_BACKEND"] = options.backend;
  changes["SYNCOPATE_ITERATION_MARKER"] = options.iteration_marker;
  changes["SYNCOPATE_ARMED"] = std::string(1, options.armed ? '1' : '0');
  if (std::string cupti = findCupti(current); !cupti.empty()) changes["SYNCOPATE_CUPTI_LIBRARY"] = cupti;
  for (const auto& [name, value] : options.extra) changes[name] = value;

  // A job that already forwards variables through Open MPI's list gets ours added to it (it
  // cannot also use -x); otherwise launcherCommand() adds -x options.
  if (auto list = current.find("OMPI_MCA_mca_base_env_list"); list != current.end() && !list->second.empty()) {
    std::string forwarded;
    for (const auto& [name, value] : changes) {
      if (!forwarded.empty()) forwarded += ';';
      forwarded += name;
    }
    changes["OMPI_MCA_mca_base_env_list"] = prepended(forwarded, current, "OMPI_MCA_mca_base_env_list", ';');
  }
  return changes;
}

namespace {

bool isOpenMpiLauncher(const std::string& program) {
  const std::string name = std::filesystem::path(program).filename().string();
  if (name != "mpirun" && name != "mpiexec" && name != "orterun" && name != "prterun" && name != "oshrun") return false;
  // MPICH's and Intel's mpirun (Hydra) pass the whole environment on by default and know no -x.
  std::string command = "'" + program + "' --version 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return false;
  std::array<char, 256> buffer{};
  std::string text;
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) text += buffer.data();
  ::pclose(pipe);
  return text.find("Open MPI") != std::string::npos || text.find("OpenRTE") != std::string::npos;
}

}  // namespace

std::vector<std::string> launcherCommand(const std::vector<std::string>& command, const Environment& changes,
                                         const Environment& current) {
  if (command.empty() || !isOpenMpiLauncher(command.front())) return command;
  if (current.count("OMPI_MCA_mca_base_env_list") != 0) return command;  // forwarded through the list
  for (const std::string& argument : command) {
    if (argument.find("mca_base_env_list") != std::string::npos) return command;  // ditto, on its command line
  }
  std::vector<std::string> rewritten{command.front()};
  for (const auto& [name, value] : changes) {
    rewritten.push_back("-x");
    rewritten.push_back(name);
  }
  rewritten.insert(rewritten.end(), command.begin() + 1, command.end());
  return rewritten;
}

}  // namespace syncopate::collector
