// Recording a job, as `syncopate record` does, for every command that runs one: record itself,
// `run --plan` (the same with the tuner's runtime asked for) and `demo`.
#pragma once

#include <string>

#include "syncopate/collector/record.hpp"

namespace syncopate::cli {

struct RecordedJob {
  collector::RecordOptions options;   // output_dir, command, backend, extra, ... (preload_library found here)
  std::string command_name = "record";  // whose messages these are
  bool quiet = false;                 // no summary lines on stderr (JSON output, the demo)
  bool echo_output = true;            // the job's stdout also on ours (always kept in job.log)
};

struct RecordedJobOutcome {
  int exit_code = 0;                  // the job's
  collector::RecordSummary summary;
};

// Prepares the run directory, runs the job with the collector loaded (its stdout also kept as
// job.log), and completes meta.json. Fails the command (message, non-zero exit) when the job
// cannot be started or nothing could be recorded; a job that fails is an outcome, not a failure.
RecordedJobOutcome runRecordedJob(const RecordedJob& job);

// job.log, or job-<rank>.log when this process is one rank of a launcher (srun, mpirun).
std::string jobLogName();

}  // namespace syncopate::cli
