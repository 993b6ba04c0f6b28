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
  state->rank = rank;
  state->size = size;
  state->handle = reinterpret_cast<std::uint64_t>(handle);
  state->init_ns = init_ns;
  state->parent_comm_id = parent_comm_id;
  if (const NcclHelpers* helpers = ncclHelpers(); helpers != nullptr && helpers->ncclCommCuDevice != nullptr) {
    int device = -1;
    if (helpers->ncclCommCuDevice(handle, &device) == ncclSuccess) state->device = device;
  }
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

trace::CommId CommRegistry::catalogId(Recorder& recorder, CommState& comm) noexcept {
  std::uint64_t entry = comm.catalog_entry.load(std::memory_order_acquire);
  if ((entry >> 32) == recorder.generation()) [[likely]] return static_cast<trace::CommId>(entry);
  trace::CatalogCommunicator info;
  info.comm_id = comm.comm_id;
  info.comm_rank = comm.rank;
  info.comm_size = comm.size;
  if (comm.device >= 0) info.device = comm.device;
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
