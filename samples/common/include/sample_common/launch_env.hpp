// What the launcher's environment says about this process: which bootstrap applies, and for
// the torchrun-style one, the rank, world size, local rank and rank 0's address.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace sample_common {

// How ranks find each other: mpirun (MPI broadcasts NCCL's unique id), the torchrun-style
// environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; a TCP exchange of the
// id), or one process alone. Auto picks from the environment.
enum class BootstrapKind { Auto, Mpi, Env, Single };

const char* toString(BootstrapKind kind);
// "auto", "mpi", "env" or "single"; nullopt for anything else.
std::optional<BootstrapKind> parseBootstrapKind(std::string_view name);

using EnvLookup = std::function<const char*(const char*)>;  // std::getenv, or a map in tests

// Auto: under mpirun (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK set) MPI; else with RANK
// and WORLD_SIZE the torchrun-style environment; else one process. Others are returned as is.
BootstrapKind resolveBootstrap(BootstrapKind requested, const EnvLookup& env);

struct EnvLaunch {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;  // LOCAL_RANK, or RANK when unset
  std::string master_addr;
  // MASTER_PORT, or MASTER_PORT + 1 when TORCHELASTIC_USE_AGENT_STORE=True: under torchrun
  // the agent's own store already listens on MASTER_PORT.
  int exchange_port = 0;
};

// Throws std::runtime_error naming the variable that is missing or malformed.
EnvLaunch readEnvLaunch(const EnvLookup& env);

}  // namespace sample_common
