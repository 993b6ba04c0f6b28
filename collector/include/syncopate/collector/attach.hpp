// What `syncopate attach DIR` does, as a library: asks every armed process of a run (through
// the control files, syncopate/collector/control_files.hpp) to record the same N iterations,
// or S seconds, and waits until they have.
//
// Every armed process starts at the same iteration: attach reads where each process is, picks
// a first iteration far enough ahead that every process learns of the request before reaching
// it (from the fastest one's iteration rate), and each process switches recording on exactly at
// that iteration's marker and off at the marker after the last one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "syncopate/collector/control_files.hpp"
#include "syncopate/trace/status.hpp"

namespace syncopate::collector {

struct AttachOptions {
  std::int64_t iterations = 0;  // exactly one of iterations and seconds is positive
  double seconds = 0.0;
  double timeout_seconds = 0.0;  // 0: derived from the plan
};

struct AttachOutcome {
  std::uint64_t request = 0;
  std::int64_t first_iteration = -1;  // -1: started at once (seconds, no markers)
  std::vector<ProcessStatus> processes;  // their final status
};

// Progress lines for a terminal (may be empty).
using Progress = std::function<void(const std::string& line)>;

// InvalidArgument for a bad request; NotFound when the run has no live armed process; an
// error naming the processes that missed the start, failed, or went away.
trace::Result<AttachOutcome> attach(const std::filesystem::path& run_directory, const AttachOptions& options,
                                    const Progress& progress);

// The first iteration to ask for, given the live processes: ahead of the furthest one by what
// the fastest one runs in `lead_seconds`, at least two.
std::int64_t chooseFirstIteration(const std::vector<ProcessStatus>& processes, double lead_seconds);

}  // namespace syncopate::collector
