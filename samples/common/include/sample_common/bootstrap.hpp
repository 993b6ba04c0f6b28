// Meeting the other ranks: who am I, how many are we, which device is mine, and NCCL's
// unique id from rank 0 (through MPI, the torchrun-style TCP exchange, or nobody).
#pragma once

#include "sample_common/launch_env.hpp"

#include <nccl.h>

namespace sample_common {

struct Membership {
  BootstrapKind kind = BootstrapKind::Single;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  ncclUniqueId id{};
};

// `requested` is resolved from the environment (resolveBootstrap); the torchrun-style exchange
// waits at most `timeout_s` for every rank. Throws std::runtime_error with a message saying
// what is wrong in the launch.
Membership joinJob(BootstrapKind requested, double timeout_s);

// Ends the job for this process: MPI_Finalize under MPI.
void leaveJob(const Membership& membership);

// After an error: if MPI is initialised, MPI_Abort takes every rank down (no rank is left
// waiting in a collective); otherwise this process exits and the launcher ends the others.
[[noreturn]] void abortJob(int exit_code);

// Ends this process at once (from any thread), without MPI calls or static destructors;
// mpirun ends the job when a rank exits without MPI_Finalize.
[[noreturn]] void exitNow(int exit_code);

}  // namespace sample_common
