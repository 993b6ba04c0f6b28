// The host side of NCCL's team API (nccl_device/core.h): the world team, the LSA team (the
// ranks that share this rank's emulated host, when hosts are equal blocks of consecutive
// ranks; else this rank alone) and the rail team (one rank per LSA team). These are plain
// arithmetic on the communicator's layout, so simgpu answers them as NCCL does.
#include "api.hpp"
#include "comm_state.hpp"
#include "log.hpp"

using namespace simgpu::nccl;

namespace {

CommState* teamComm(ncclComm_t comm, const char* api) {
  Status why;
  CommState* state = commFromHandle(comm, api, &why);
  if (state == nullptr) {
    fail(why);
    return nullptr;
  }
  if (Status st = state->waitInitialized(); !st.ok()) {
    fail(st.code, std::string(api) + ": " + st.message);
    return nullptr;
  }
  return state;
}

// The size of this communicator's host blocks: rank r starts a new host exactly when r is a
// multiple of the size. 1 when the hosts are not such blocks.
int lsaSize(const CommState& state) {
  const auto& places = state.endpoint().places();
  const int n = state.nranks();
  int size = 1;
  while (size < n && places[static_cast<std::size_t>(size)].host == places[0].host) ++size;
  if (n % size != 0) return 1;
  for (int r = 1; r < n; ++r) {
    const bool same_host_as_previous = places[static_cast<std::size_t>(r)].host == places[static_cast<std::size_t>(r - 1)].host;
    if (same_host_as_previous != (r % size != 0)) return 1;
  }
  return size;
}

}  // namespace

SIMGPU_NCCL_API(Team, ncclTeamWorld, ncclComm_t comm);
Team ncclTeamWorld(ncclComm_t comm) {
  CommState* state = teamComm(comm, "ncclTeamWorld");
  if (state == nullptr) return Team{0, 0, 0};
  return Team{state->nranks(), state->rank(), 1};
}

SIMGPU_NCCL_API(Team, ncclTeamLsa, ncclComm_t comm);
Team ncclTeamLsa(ncclComm_t comm) {
  CommState* state = teamComm(comm, "ncclTeamLsa");
  if (state == nullptr) return Team{0, 0, 0};
  const int size = lsaSize(*state);
  return Team{size, state->rank() % size, 1};
}

SIMGPU_NCCL_API(Team, ncclTeamRail, ncclComm_t comm);
Team ncclTeamRail(ncclComm_t comm) {
  CommState* state = teamComm(comm, "ncclTeamRail");
  if (state == nullptr) return Team{0, 0, 0};
  const int size = lsaSize(*state);
  return Team{state->nranks() / size, state->rank() / size, size};
}

SIMGPU_NCCL_API(int, ncclTeamRankToWorld, ncclComm_t comm, Team team, int rank);
int ncclTeamRankToWorld(ncclComm_t comm, Team team, int rank) {
  CommState* state = teamComm(comm, "ncclTeamRankToWorld");
  if (state == nullptr) return -1;
  return state->rank() + (rank - team.rank) * team.stride;
}

SIMGPU_NCCL_API(int, ncclTeamRankToLsa, ncclComm_t comm, Team team, int rank);
int ncclTeamRankToLsa(ncclComm_t comm, Team team, int rank) {
  CommState* state = teamComm(comm, "ncclTeamRankToLsa");
  if (state == nullptr) return -1;
  return state->rank() % lsaSize(*state) + (rank - team.rank) * team.stride;
}
