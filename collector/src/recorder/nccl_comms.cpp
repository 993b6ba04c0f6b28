#include "recorder/nccl_comms.hpp"

#include <new>

#include "syncopate/trace/hash.hpp"

#include "syncopate/dispatch/address_map.hpp"
#include "syncopate/dispatch/chain.hpp"
#include "recorder/recorder.hpp"

namespace syncopate::preload {
namespace {

constinit AddressMap<CommState, 12> byHandle;

}  // namespace

std::uint64_t hashBytes(const void* data, std::size_t size, std::uint64_t seed) noexcept {
  // FNV-1a, then a final mix so that similar ids spread.
  return combineHash(trace::fnv1a(trace::kFnvOffset ^ seed, data, size), size);
}

std::uint64_t combineHash(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t x = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x & 0x7fffffffffffffffull;  // stored as a non-negative SQLite integer
}

CommState* CommRegistry::add(ncclComm_t handle, std::uint64_t comm_id, std::int32_t rank, std::int32_t size,
                             std::uint64_t parent_comm_id, std::int64_t init_ns) noexcept {
  auto* state = new (std::nothrow) CommState;
  if (state == nullptr) return nullptr;
  state->comm_id = comm_id;
  state->rank.store(rank, std::memory_order_relaxed);
  state->size.store(size, std::memory_order_relaxed);
  state->handle = reinterpret_cast<std::uint64_t>(handle);
  state->init_ns = init_ns;
  state->parent_comm_id = parent_comm_id;
  // A destroyed communicator's state is kept (a late reader may still hold it); its slot now
  // names the new one.
  if (!byHandle.insert(reinterpret_cast<std::uintptr_t>(handle), state)) {
    delete state;
    return nullptr;
  }
  return state;
}

CommState* CommRegistry::find(ncclComm_t handle) const noexcept {
  return byHandle.find(reinterpret_cast<std::uintptr_t>(handle));
}

void CommRegistry::remove(ncclComm_t handle) noexcept {
  byHandle.insert(reinterpret_cast<std::uintptr_t>(handle), nullptr);
}

void CommRegistry::describe(CommState& comm) noexcept {
  if (comm.described.load(std::memory_order_acquire)) [[likely]] return;
  const NcclHelpers* helpers = ncclHelpers();
  if (helpers == nullptr || helpers->ncclCommGetAsyncError == nullptr) return;
  auto* handle = reinterpret_cast<ncclComm_t>(comm.handle);
  ncclResult_t state = ncclInProgress;
  if (helpers->ncclCommGetAsyncError(handle, &state) != ncclSuccess || state != ncclSuccess) return;
  // Several threads may get here at once: they learn the same values.
  int value = -1;
  if (helpers->ncclCommCuDevice != nullptr && helpers->ncclCommCuDevice(handle, &value) == ncclSuccess) {
    comm.device.store(value, std::memory_order_relaxed);
  }
  if (comm.rank.load(std::memory_order_relaxed) < 0 && helpers->ncclCommUserRank != nullptr &&
      helpers->ncclCommUserRank(handle, &value) == ncclSuccess) {
    comm.rank.store(value, std::memory_order_relaxed);
  }
  if (comm.size.load(std::memory_order_relaxed) < 0 && helpers->ncclCommCount != nullptr &&
      helpers->ncclCommCount(handle, &value) == ncclSuccess) {
    comm.size.store(value, std::memory_order_relaxed);
  }
  comm.described.store(true, std::memory_order_release);
}

trace::CommId CommRegistry::catalogId(Recorder& recorder, CommState& comm) noexcept {
  std::uint64_t entry = comm.catalog_entry.load(std::memory_order_acquire);
  if ((entry >> 32) == recorder.generation()) [[likely]] return static_cast<trace::CommId>(entry);
  trace::CatalogCommunicator info;
  info.comm_id = comm.comm_id;
  info.comm_rank = comm.rank.load(std::memory_order_relaxed);
  info.comm_size = comm.size.load(std::memory_order_relaxed);
  if (const std::int32_t device = comm.device.load(std::memory_order_relaxed); device >= 0) info.device = device;
  info.handle = comm.handle;
  info.init_ns = comm.init_ns;
  if (comm.parent_comm_id != 0) info.parent_comm_id = comm.parent_comm_id;
  trace::CommId id = recorder.catalog().registerCommunicator(info);
  comm.catalog_entry.store((recorder.generation() << 32) | id, std::memory_order_release);
  return id;
}

CommRegistry& commRegistry() noexcept {
  static constinit CommRegistry registry;
  return registry;
}

}  // namespace syncopate::preload
