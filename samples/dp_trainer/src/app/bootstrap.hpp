// Meeting the other ranks: who am I, how many are we, which device is mine, and NCCL's
// unique id from rank 0 (through MPI, the torchrun-style TCP exchange, or nobody).
#pragma once

#include "dp_trainer/options.hpp"

#include <nccl.h>

namespace dp_trainer {

struct Membership {
  BootstrapKind kind = BootstrapKind::Single;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  ncclUniqueId id{};
};

// Throws std::runtime_error with a message saying what is wrong in the launch.
Membership joinJob(const Options& options);

// Ends the job for this process: MPI_Finalize under MPI.
void leaveJob(const Membership& membership);

// After an error: if MPI is initialised, MPI_Abort takes every rank down (no rank is left
// waiting in a collective); otherwise this process exits and the launcher ends the others.
[[noreturn]] void abortJob(int exit_code);

// Ends this process at once (from any thread), without MPI calls or static destructors;
// mpirun ends the job when a rank exits without MPI_Finalize.
[[noreturn]] void exitNow(int exit_code);

}  // namespace dp_trainer
