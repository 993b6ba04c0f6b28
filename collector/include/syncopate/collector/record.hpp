// What `syncopate record` does, as a library (cli/record_command.cpp is only its command line):
// prepare the run directory, build the environment that loads the collector into the command
// and every process it starts (LD_PRELOAD and NVTX's injection variable, inherited through
// launchers; Open MPI's mpirun is also told to forward them to remote ranks), run the command,
// and write the run's meta.json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "syncopate/trace/status.hpp"

namespace syncopate::collector {

// The environment variables a recording sets (the values of the variables it extends, such as
// LD_PRELOAD, already include what was there).
using Environment = std::map<std::string, std::string>;

struct RecordOptions {
  std::filesystem::path output_dir;
  std::vector<std::string> command;       // argv of the job
  bool armed = false;                     // load dormant; record when `syncopate attach` asks
  std::string backend = "auto";           // auto | cupti | events
  std::string iteration_marker = "ProfilerStep";
  std::filesystem::path preload_library;  // libsyncopate_preload.so
  // Point NCCL_PROFILER_PLUGIN at the collector (NCCL's profiler plugin interface), unless the
  // job already set it.
  bool nccl_profiler = true;
  // More variables for the job's processes, forwarded to remote ranks like the recorder's own
  // (`syncopate run --plan` names the plan for the tuner's runtime this way).
  Environment extra;
};

// The collector library installed next to the running executable (<exe>/../lib), or named by
// SYNCOPATE_PRELOAD_LIBRARY. NotFound with the places looked at.
trace::Result<std::filesystem::path> findPreloadLibrary();

// Creates the run directory if needed and checks that it can be written. When not inside a
// launched rank (no launcher rank variable), a directory that already holds stores is
// refused: a second recording would mix with the first.
trace::Status prepareRunDirectory(const std::filesystem::path& directory);

// The variables to set for the job, given the current environment (`current`, usually
// environ). Warnings (e.g. another tool already owns NVTX's injection) go to `warnings`.
Environment recordEnvironment(const RecordOptions& options, const Environment& current,
                              std::vector<std::string>& warnings);

// What the recording asks of NCCL's profiler plugin interface, for meta.json: "collector"
// (NCCL_PROFILER_PLUGIN names the collector), "off" (not asked for), or "left to the job:
// <value>" (the job set NCCL_PROFILER_PLUGIN itself; it is left alone).
std::string ncclProfilerRequest(const RecordOptions& options, const Environment& current);

// The current process's environment as a map.
Environment currentEnvironment();

// The command to run: the job's own, except that Open MPI's mpirun/mpiexec gets `-x NAME` for
// every variable of `changes`, so that remote ranks get them too — unless the job forwards
// variables with OMPI_MCA_mca_base_env_list (Open MPI refuses both at once; then
// recordEnvironment() added ours to that list). Other launchers inherit the environment.
std::vector<std::string> launcherCommand(const std::vector<std::string>& command, const Environment& changes,
                                         const Environment& current);

// Runs `command` with `changes` applied to the environment and waits for it; SIGINT, SIGTERM
// and SIGHUP are passed on to it rather than ending this process. Its exit code, or 128 + the
// signal that killed it; an error when it could not be started. With `output_copy`, what the
// job writes on stdout is also written to that file (the run's job.log, which `syncopate
// compare` reads), as it goes, and to this process's stdout unless `echo` is false.
trace::Result<int> runCommand(const std::vector<std::string>& command, const Environment& changes,
                              const std::filesystem::path& output_copy = {}, bool echo = true);

// The file of a run directory that keeps what the job printed on stdout.
inline constexpr const char* kJobLogFile = "job.log";

// meta.json: written when the recording starts (command, host, start time, what was asked),
// then completed when the job ended (hosts, the backends the processes used and why). Several
// `syncopate record` of one run (one per rank under srun) merge their hosts under a lock.
trace::Status writeStartMeta(const RecordOptions& options, std::int64_t start_unix_ns);
struct RecordSummary {
  int stores = 0;
  std::vector<std::int32_t> ranks;
  std::vector<std::string> hosts;
  std::map<std::string, int> backends;  // backend -> number of stores
  int nccl_profiler_loaded = 0;          // stores whose process NCCL handed the collector's profiler plugin
  std::map<std::string, int> max_connections;  // CUDA_DEVICE_MAX_CONNECTIONS as set -> stores that ran with it
  std::vector<std::string> backend_reasons;
  std::map<std::string, std::int64_t> counters;  // summed over stores, non-zero ones
  std::vector<std::string> problems;             // stores that could not be read
};
trace::Result<RecordSummary> summarizeRun(const std::filesystem::path& directory);
trace::Status writeEndMeta(const std::filesystem::path& directory, const RecordSummary& summary);

}  // namespace syncopate::collector
