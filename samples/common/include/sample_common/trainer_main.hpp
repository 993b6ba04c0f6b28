// What both trainers' main() does around the training loop, with messages that start with the
// program's name: joining the job, the watchdog that turns a hang into an exit, and ending the
// whole job when a rank fails (exit codes in exit_codes.hpp).
#pragma once

#include "sample_common/bootstrap.hpp"
#include "sample_common/watchdog.hpp"

#include <string>

namespace sample_common {

// joinJob(bootstrap, timeout_s); when it fails, prints "<program>: cannot join the job: <why>"
// and ends the job with kExitError.
Membership joinJobOrAbort(const std::string& program, BootstrapKind bootstrap, double timeout_s);

// After `timeout_s` without progress, prints what rank `rank` was waiting for and ends this
// process with kExitHung, from the watchdog's thread (so without MPI calls).
Watchdog rankWatchdog(const std::string& program, int rank, double timeout_s);

// Prints "<program>: rank <rank>: <message>" and ends the job with `exit_code`.
[[noreturn]] void abortRank(const std::string& program, int rank, int exit_code, const std::string& message);

}  // namespace sample_common
