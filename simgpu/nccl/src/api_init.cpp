// Making communicators: ncclGetUniqueId, ncclCommInitRank(Config), ncclCommInitRankScalable,
// ncclCommInitAll, ncclCommSplit, ncclCommShrink.
#include "api.hpp"
#include "group.hpp"
#include "join_plan.hpp"
#include "log.hpp"
#include "simgpu/core/runtime.hpp"
#include "simgpu/nccl/stale_segments.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

using namespace simgpu::nccl;

namespace {

// Leftovers of jobs that died while joining are removed once per process; a segment younger
// than this may be one being created right now.
constexpr std::int64_t kStaleAgeNs = 10'000'000'000;

PendingJoin joinOf(const std::shared_ptr<CommState>& state) {
  return PendingJoin{state,
                     [state] {
                       Status st = state->attach();
                       if (st.ok()) st = state->awaitPeers();
                       return st;
                     },
                     state->plan().config.blocking};
}

ncclResult_t initRank(const char* api, ncclComm_t* newcomm, int nranks, const ncclUniqueId& id, int rank,
                      const ncclConfig_t* config) {
  if (newcomm == nullptr) return rejectCall(Status::error(ncclInvalidArgument, std::string(api) + ": newcomm argument is NULL"));
  *newcomm = nullptr;
  if (Status st = coreReady(api); !st.ok()) return rejectCall(st);
  if (nranks < 1) {
    return rejectCall(Status::error(ncclInvalidArgument, std::string(api) + ": invalid nranks " + std::to_string(nranks)));
  }
  if (rank < 0 || rank >= nranks) {
    return rejectCall(Status::error(ncclInvalidArgument, std::string(api) + ": rank " + std::to_string(rank) +
                                                             " is not in the range 0.." + std::to_string(nranks - 1)));
  }
  CommKey key;
  if (!fromUniqueId(id, &key)) {
    return rejectCall(Status::error(ncclInvalidArgument, std::string(api) + ": the unique id was not made by ncclGetUniqueId"));
  }
  CommConfig cfg;
  if (Status st = readConfig(api, config, nullptr, &cfg); !st.ok()) return rejectCall(st);
  JoinPlan plan;
  if (Status st = makeJoinPlan(api, key, nranks, rank, simgpu::currentDevice(), hostOfRank(rank), cfg, &plan); !st.ok()) {
    return rejectCall(st);
  }
  auto state = std::make_shared<CommState>(plan);
  auto* handle = new ncclComm{ncclComm::kMagic, state};
  *newcomm = handle;
  const ncclResult_t result = submitJoin(joinOf(state));
  if (result != ncclSuccess && result != ncclInProgress && cfg.blocking) {
    // A blocking init that failed leaves no communicator behind, as in NCCL.
    delete handle;
    *newcomm = nullptr;
  }
  return result;
}

}  // namespace

SIMGPU_NCCL_API(ncclResult_t, ncclGetUniqueId, ncclUniqueId* uniqueId);
ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  if (uniqueId == nullptr) return fail(ncclInvalidArgument, "ncclGetUniqueId: uniqueId argument is NULL");
  static std::once_flag cleaned;
  std::call_once(cleaned, [] { removeStaleSegments("/dev/shm", kStaleAgeNs); });
  *uniqueId = toUniqueId(randomCommKey());
  return ncclSuccess;
}

SIMGPU_NCCL_API(ncclResult_t, ncclCommInitRank, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return initRank("ncclCommInitRank", comm, nranks, commId, rank, nullptr);
}

SIMGPU_NCCL_API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                ncclConfig_t* config);
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
  return initRank("ncclCommInitRankConfig", comm, nranks, commId, rank, config);
}

// NCCL uses several ids only to spread its bootstrap; every rank passes the same list, so
// the first one names the communicator.
SIMGPU_NCCL_API(ncclResult_t, ncclCommInitRankScalable, ncclComm_t* newcomm, int nranks, int myrank, int nId,
                ncclUniqueId* commIds, ncclConfig_t* config);
ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
  if (nId < 1 || commIds == nullptr) {
    return rejectCall(Status::error(ncclInvalidArgument, "ncclCommInitRankScalable: needs at least one unique id (nId=" +
                                                             std::to_string(nId) + ")"));
  }
  return initRank("ncclCommInitRankScalable", newcomm, nranks, commIds[0], myrank, config);
}

SIMGPU_NCCL_API(ncclResult_t, ncclCommInitAll, ncclComm_t* comm, int ndev, const int* devlist);
ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  constexpr const char* api = "ncclCommInitAll";
  if (comms == nullptr) return fail(ncclInvalidArgument, "ncclCommInitAll: comms argument is NULL");
  if (ndev < 1) return fail(ncclInvalidArgument, "ncclCommInitAll: invalid ndev " + std::to_string(ndev));
  if (Status st = coreReady(api); !st.ok()) return fail(st);
  std::vector<int> devices;
  for (int i = 0; i < ndev; ++i) {
    const int device = devlist != nullptr ? devlist[i] : i;
    if (!simgpu::validDevice(device)) {
      return fail(ncclInvalidArgument, "ncclCommInitAll: device " + std::to_string(device) + " does not exist (" +
                                           std::to_string(simgpu::deviceCount()) + " devices; the profile's devices_per_process)");
    }
    if (std::find(devices.begin(), devices.end(), device) != devices.end()) {
      return fail(ncclInvalidUsage, "ncclCommInitAll: device " + std::to_string(device) + " is listed twice (duplicate GPU)");
    }
    devices.push_back(device);
  }
  CommConfig cfg;  // ncclCommInitAll is blocking
  const CommKey key = randomCommKey();
  std::vector<std::shared_ptr<CommState>> states;
  for (int i = 0; i < ndev; ++i) {
    JoinPlan plan;
    if (Status st = makeJoinPlan(api, key, ndev, i, devices[static_cast<std::size_t>(i)], hostOfRank(i), cfg, &plan); !st.ok()) {
      return fail(st);
    }
    states.push_back(std::make_shared<CommState>(plan));
  }
  std::vector<PendingJoin> joins;
  for (const auto& s : states) joins.push_back(joinOf(s));
  // Inside the caller's group, the joins wait for its end (NCCL's ncclCommInitAll is a group too).
  ncclResult_t result = ncclSuccess;
  if (inGroup()) {
    for (PendingJoin& j : joins) submitJoin(std::move(j));
  } else {
    result = runJoins(std::move(joins));
  }
  for (int i = 0; i < ndev; ++i) {
    comms[i] = result == ncclSuccess ? new ncclComm{ncclComm::kMagic, states[static_cast<std::size_t>(i)]} : nullptr;
  }
  return result;
}

SIMGPU_NCCL_API(ncclResult_t, ncclCommSplit, ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                ncclConfig_t* config);
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  constexpr const char* api = "ncclCommSplit";
  Status why;
  CommState* parent_state = commFromHandle(comm, api, &why);
  if (parent_state == nullptr) return rejectCall(why);
  if (newcomm == nullptr) return rejectCall(Status::error(ncclInvalidArgument, "ncclCommSplit: newcomm argument is NULL"));
  *newcomm = nullptr;
  if (Status st = parent_state->waitInitialized(); !st.ok()) return rejectCall(Status::error(st.code, "ncclCommSplit: " + st.message));
  if (Status st = parent_state->usable(api); !st.ok()) return rejectCall(st);
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR) {
    return rejectCall(Status::error(ncclInvalidArgument, "ncclCommSplit: invalid color " + std::to_string(color) +
                                                             " (a color is >= 0 or NCCL_SPLIT_NOCOLOR)"));
  }
  std::shared_ptr<CommState> parent = comm->state;
  CommConfig cfg;
  if (Status st = readConfig(api, config, &parent->plan().config, &cfg); !st.ok()) return rejectCall(st);
  const std::uint64_t split = parent->derived_comms++;

  std::shared_ptr<CommState> child;
  if (color != NCCL_SPLIT_NOCOLOR) {
    JoinPlan provisional = parent->plan();
    provisional.config = cfg;
    child = std::make_shared<CommState>(provisional);
    *newcomm = new ncclComm{ncclComm::kMagic, child};
  }
  auto join = [parent, child, color, key, split]() -> Status {
    // Every rank of the parent says which color it wants and where it sorts in it.
    struct Wish {
      std::int32_t color;
      std::int32_t key;
    };
    const Wish mine{color, key};
    std::vector<Wish> all(static_cast<std::size_t>(parent->nranks()));
    if (Status st = parent->endpoint().allGatherSmall(&mine, sizeof(mine), all.data()); !st.ok()) return st;
    if (child == nullptr) return Status::success();
    std::vector<int> members;
    for (int r = 0; r < parent->nranks(); ++r) {
      if (all[static_cast<std::size_t>(r)].color == color) members.push_back(r);
    }
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
      return all[static_cast<std::size_t>(a)].key < all[static_cast<std::size_t>(b)].key;
    });
    JoinPlan plan = child->plan();
    plan.key = deriveCommKey(parent->plan().key, split, static_cast<std::uint64_t>(color));
    plan.nranks = static_cast<int>(members.size());
    plan.rank = static_cast<int>(std::find(members.begin(), members.end(), parent->rank()) - members.begin());
    child->setPlan(plan);
    Status st = child->attach();
    if (st.ok()) st = child->awaitPeers();
    return st;
  };
  const ncclResult_t result = submitJoin(PendingJoin{child, join, cfg.blocking});
  if (result != ncclSuccess && result != ncclInProgress && cfg.blocking && *newcomm != nullptr) {
    delete *newcomm;
    *newcomm = nullptr;
  }
  return result;
}

SIMGPU_NCCL_API(ncclResult_t, ncclCommShrink, ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags);
ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                            ncclConfig_t* config, int shrinkFlags) {
  constexpr const char* api = "ncclCommShrink";
  Status why;
  CommState* parent_state = commFromHandle(comm, api, &why);
  if (parent_state == nullptr) return rejectCall(why);
  if (newcomm == nullptr) return rejectCall(Status::error(ncclInvalidArgument, "ncclCommShrink: newcomm argument is NULL"));
  *newcomm = nullptr;
  // The parent may have failed (a rank died): shrinking it is how a job recovers.
  if (Status st = parent_state->waitInitialized(); !st.ok()) return rejectCall(Status::error(st.code, "ncclCommShrink: " + st.message));
  if (shrinkFlags != NCCL_SHRINK_DEFAULT && shrinkFlags != NCCL_SHRINK_ABORT) {
    return rejectCall(Status::error(ncclInvalidArgument, "ncclCommShrink: invalid shrinkFlags " + std::to_string(shrinkFlags)));
  }
  const int n = parent_state->nranks();
  if (excludeRanksCount < 0 || excludeRanksCount >= n || (excludeRanksCount > 0 && excludeRanksList == nullptr)) {
    return rejectCall(Status::error(ncclInvalidArgument, "ncclCommShrink: invalid excludeRanksList/excludeRanksCount (" +
                                                             std::to_string(excludeRanksCount) + " of " + std::to_string(n) + " ranks)"));
  }
  std::vector<int> excluded(excludeRanksList, excludeRanksList + excludeRanksCount);
  std::sort(excluded.begin(), excluded.end());
  if (std::adjacent_find(excluded.begin(), excluded.end()) != excluded.end() ||
      std::any_of(excluded.begin(), excluded.end(), [&](int r) { return r < 0 || r >= n; })) {
    return rejectCall(Status::error(ncclInvalidArgument, "ncclCommShrink: excludeRanksList holds a rank twice or out of range"));
  }
  if (std::binary_search(excluded.begin(), excluded.end(), parent_state->rank())) {
    return rejectCall(Status::error(ncclInvalidArgument, "ncclCommShrink: rank " + std::to_string(parent_state->rank()) +
                                                             " is in excludeRanksList: excluded ranks do not call ncclCommShrink"));
  }
  std::shared_ptr<CommState> parent = comm->state;
  CommConfig cfg;
  if (Status st = readConfig(api, config, &parent->plan().config, &cfg); !st.ok()) return rejectCall(st);
  if (shrinkFlags == NCCL_SHRINK_ABORT) parent->abort();
  // The survivors derive the new communicator from the parent, the shrink's number and the
  // excluded ranks: no exchange over the parent, whose excluded ranks may be gone.
  std::uint64_t excluded_hash = 0xcbf29ce484222325ULL;
  for (int r : excluded) excluded_hash = (excluded_hash ^ static_cast<std::uint64_t>(r)) * 0x100000001b3ULL;
  JoinPlan plan = parent->plan();
  plan.key = deriveCommKey(parent->plan().key, parent->derived_comms++ | (1ULL << 63), excluded_hash);
  plan.nranks = n - excludeRanksCount;
  plan.rank = parent->rank() - static_cast<int>(std::lower_bound(excluded.begin(), excluded.end(), parent->rank()) - excluded.begin());
  plan.config = cfg;
  auto child = std::make_shared<CommState>(plan);
  auto* handle = new ncclComm{ncclComm::kMagic, child};
  *newcomm = handle;
  const ncclResult_t result = submitJoin(joinOf(child));
  if (result != ncclSuccess && result != ncclInProgress && cfg.blocking) {
    delete handle;
    *newcomm = nullptr;
  }
  return result;
}
