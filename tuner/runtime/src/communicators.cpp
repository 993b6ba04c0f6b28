#include "communicators.hpp"

#include "own_calls.hpp"
#include "syncopate/dispatch/log.hpp"
#include "syncopate/dispatch/tables.hpp"

namespace syncopate::preload {

bool CommunicatorTable::add(ncclComm_t comm, int rank, int nranks) noexcept {
  std::lock_guard lock(creation_);
  const int n = count_.load(std::memory_order_relaxed);
  if (n == kMax) {
    log(LogLevel::Warn, "runtime: more than %d communicators; the others are not rescheduled", kMax);
    return false;
  }
  Communicator& c = comms_[n];
  c.comm = comm;
  c.rank = rank;
  c.size = nranks;
  if (const NcclTable* real = realNccl(); real != nullptr && real->ncclCommSplit != nullptr) {
    OwnCall own;
    if (real->ncclCommSplit(comm, 0, rank, &c.twin, nullptr) != ncclSuccess) c.twin = nullptr;
  }
  count_.store(n + 1, std::memory_order_release);
  return true;
}

CommunicatorTable::Communicator* CommunicatorTable::find(ncclComm_t comm) noexcept {
  const int n = count_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (comms_[i].comm == comm) return &comms_[i];
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
    if (!comms_[i].issued_on) continue;
    ncclResult_t state = ncclSuccess;
    if (helpers->ncclCommGetAsyncError(comms_[i].comm, &state) != ncclSuccess) continue;
    if (state != ncclSuccess && state != ncclInProgress) {
      *error = state;
      return &comms_[i];
    }
  }
  return nullptr;
}

}  // namespace syncopate::preload
