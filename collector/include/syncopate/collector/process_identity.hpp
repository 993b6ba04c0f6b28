// Who this process is in the job: host, pid, the launcher's rank (RANK, LOCAL_RANK,
// OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID, ...) and its command line, and the
// environment's CUDA settings that the tuner models. A rank that is not in the environment is
// learnt later from the first NCCL communicator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace syncopate::preload {

struct ProcessIdentity {
  std::string host;
  std::int64_t pid = 0;
  std::optional<std::int32_t> rank;
  std::optional<std::int32_t> local_rank;
  std::optional<std::int32_t> world_size;
  std::string rank_source;  // the variable the rank came from, e.g. "OMPI_COMM_WORLD_RANK"
  std::string command;      // argv joined by spaces
  // CUDA_DEVICE_MAX_CONNECTIONS as the process's environment gives it (CUDA reads it when it makes
  // a context; the tuner models the work queues it sets); empty when unset.
  std::string cuda_device_max_connections;
};

// `lookup` is getenv in production; tests pass their own. A forked child (whose environment
// still names its parent's rank) passes trust_environment_rank = false.
ProcessIdentity readProcessIdentity(const char* (*lookup)(const char* name), bool trust_environment_rank);

}  // namespace syncopate::preload
