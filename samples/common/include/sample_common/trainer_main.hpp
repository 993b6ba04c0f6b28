// What both trainers' main() does around the training loop, with messages that start with the
// program's name: joining the job, the watchdog that turns a hang into an exit, and ending the
// whole job when a rank fails (exit codes in exit_codes.hpp).
#pragma once

#include "sample_common/bootstrap.hpp"
#include "sample_common/watchdog.hpp"

#include <functional>
#include <string>

namespace sample_common {

// joinJob(bootstrap, timeout_s); when it fails, prints "<program>: cannot join the job: <why>"
// and ends the job with kExitError.
Membership joinJobOrAbort(const std::string& program, BootstrapKind bootstrap, double timeout_s);

// After `timeout_s` without progress, prints what rank `rank` was waiting for and ends this
// process with kExitHung, from the watchdog's thread (so without MPI calls).
Watchdog rankWatchdog(const std::string& program, int rank, double timeout_s);

// Calls `train`; if it throws, prints "<program>: rank <rank>: <what>" and ends the whole job,
// with kExitVerification for a VerificationError and kExitError for anything else. The job ends
// from inside the caller's scope, so that a trainer's destructor (which would wait for the
// communicator) never runs on a failed job.
void trainOrAbort(const std::string& program, int rank, const std::function<void()>& train);

}  // namespace sample_common
