#include "communicators.hpp"

#include "own_calls.hpp"
#include "syncopate/dispatch/log.hpp"
#include "syncopate/dispatch/tables.hpp"

namespace syncopate::preload {

bool CommunicatorTable::add(ncclComm_t comm, int rank, int nranks) noexcept {
  std::lock_guard lock(creation_);
  const int used = count_.load(std::memory_order_relaxed);
  int at = 0;
  while (at < used && comms_[at].comm.load(std::memory_order_relaxed) != nullptr) ++at;
  if (at == kMax) {
    log(LogLevel::Warn, "runtime: more than %d communicators at once; the others are not rescheduled", kMax);
    return false;
  }
  // A retired communicator's slot is filled before it is published again: a lookup that finds
  // the handle finds this communicator's fields.
  Communicator& c = comms_[at];
  c.twin = nullptr;
  c.rank = rank;
  c.size = nranks;
  c.index = kNoIndex;
  c.issued_on = false;
  if (const NcclTable* real = realNccl(); real != nullptr && real->ncclCommSplit != nullptr) {
    OwnCall own;
    if (real->ncclCommSplit(comm, 0, rank, &c.twin, nullptr) != ncclSuccess) c.twin = nullptr;
  }
  c.comm.store(comm, std::memory_order_release);
  if (at == used) count_.store(used + 1, std::memory_order_release);
  return true;
}

void CommunicatorTable::retire(ncclComm_t comm, bool abort) noexcept {
  std::lock_guard lock(creation_);
  Communicator* c = find(comm);
  if (c == nullptr) return;
  c->comm.store(nullptr, std::memory_order_release);
  const NcclTable* real = realNccl();
  if (c->twin == nullptr || real == nullptr) return;
  OwnCall own;
  const ncclResult_t ended = abort ? real->ncclCommAbort(c->twin) : real->ncclCommDestroy(c->twin);
  if (ended != ncclSuccess) {
    log(LogLevel::Warn, "runtime: ending the agreement's twin of a communicator failed (NCCL error %d)",
        static_cast<int>(ended));
  }
  c->twin = nullptr;
}

CommunicatorTable::Communicator* CommunicatorTable::find(ncclComm_t comm) noexcept {
  if (comm == nullptr) return nullptr;
  const int n = count_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (comms_[i].comm.load(std::memory_order_acquire) == comm) return &comms_[i];
  }
  return nullptr;
}

std::uint32_t CommunicatorTable::indexOf(ncclComm_t comm) noexcept {
  Communicator* c = find(comm);
  if (c == nullptr) return kNoIndex;
  if (c->index == kNoIndex) c->index = next_index_++;
  return c->index;
}

int CommunicatorTable::sizeOf(ncclComm_t comm) noexcept {
  if (Communicator* c = find(comm)) return c->size;
  int size = 0;
  if (const NcclHelpers* helpers = ncclHelpers(); helpers != nullptr && helpers->ncclCommCount != nullptr) {
    helpers->ncclCommCount(comm, &size);
  }
  return size;
}

const CommunicatorTable::Communicator* CommunicatorTable::failedIssuedOn(ncclResult_t* error) noexcept {
  const NcclHelpers* helpers = ncclHelpers();
  if (helpers == nullptr || helpers->ncclCommGetAsyncError == nullptr) return nullptr;
  OwnCall own;
  const int n = count_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    const ncclComm_t comm = comms_[i].comm.load(std::memory_order_acquire);
    if (comm == nullptr || !comms_[i].issued_on) continue;
    ncclResult_t state = ncclSuccess;
    if (helpers->ncclCommGetAsyncError(comm, &state) != ncclSuccess) continue;
    if (state != ncclSuccess && state != ncclInProgress) {
      *error = state;
      return &comms_[i];
    }
  }
  return nullptr;
}

}  // namespace syncopate::preload
