// NCCL's memory helpers, as NCCL behaves where they bring no speed-up: ncclMemAlloc is
// cudaMalloc on the current device, ncclMemFree is cudaFree, and ncclCommRegister keeps its
// per-communicator registration cache (reference counts and the errors of a bad handle)
// without changing how transfers run.
#include "api.hpp"
#include "comm_state.hpp"
#include "join_plan.hpp"
#include "log.hpp"
#include "simgpu/core/memory.hpp"
#include "simgpu/core/runtime.hpp"

#include <unistd.h>

#include <algorithm>

using namespace simgpu::nccl;

SIMGPU_NCCL_API(ncclResult_t, ncclMemAlloc, void** ptr, size_t size);
ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  if (Status st = coreReady("ncclMemAlloc"); !st.ok()) return fail(st);
  // NCCL passes a NULL ptr on to cudaMalloc, which rejects it.
  if (ptr == nullptr) return fail(ncclUnhandledCudaError, "ncclMemAlloc: cudaMalloc failed: ptr is NULL (invalid argument)");
  const cudaError_t err = simgpu::allocateDevice(simgpu::currentDevice(), size, ptr);
  if (err != cudaSuccess) {
    return fail(ncclUnhandledCudaError, "ncclMemAlloc: cudaMalloc of " + std::to_string(size) + " bytes failed (CUDA error " +
                                            std::to_string(static_cast<int>(err)) + ")");
  }
  return ncclSuccess;
}

SIMGPU_NCCL_API(ncclResult_t, ncclMemFree, void* ptr);
ncclResult_t ncclMemFree(void* ptr) {
  if (ptr == nullptr) return ncclSuccess;
  if (Status st = coreReady("ncclMemFree"); !st.ok()) return fail(st);
  const cudaError_t err = simgpu::freeDevice(ptr);
  if (err != cudaSuccess) {
    return fail(ncclUnhandledCudaError, "ncclMemFree: cudaFree failed (CUDA error " + std::to_string(static_cast<int>(err)) +
                                            "): not a pointer from ncclMemAlloc or cudaMalloc");
  }
  return ncclSuccess;
}

SIMGPU_NCCL_API(ncclResult_t, ncclCommRegister, const ncclComm_t comm, void* buff, size_t size, void** handle);
ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  Status why;
  CommState* state = commFromHandle(comm, "ncclCommRegister", &why);
  if (state == nullptr) return fail(why);
  if (handle == nullptr) return fail(ncclInvalidArgument, "ncclCommRegister: handle argument is NULL");
  // Buffers in host memory are not registered (NCCL skips them and returns a NULL handle).
  if (simgpu::lookupPointer(buff).kind != simgpu::MemoryKind::Device) {
    *handle = nullptr;
    return ncclSuccess;
  }
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(buff) & ~(page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(buff) + size + page - 1) & ~(page - 1);
  std::lock_guard lock(state->reg_mu);
  for (auto& reg : state->registrations) {
    if (reg->begin <= begin && reg->end >= end) {
      ++reg->refs;
      *handle = reg.get();
      return ncclSuccess;
    }
  }
  state->registrations.push_back(std::make_unique<Registration>(Registration{begin, end, 1}));
  *handle = state->registrations.back().get();
  return ncclSuccess;
}

SIMGPU_NCCL_API(ncclResult_t, ncclCommDeregister, const ncclComm_t comm, void* handle);
ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  Status why;
  CommState* state = commFromHandle(comm, "ncclCommDeregister", &why);
  if (state == nullptr) return fail(why);
  if (handle == nullptr) return ncclSuccess;
  std::lock_guard lock(state->reg_mu);
  auto it = std::find_if(state->registrations.begin(), state->registrations.end(),
                         [&](const auto& reg) { return reg.get() == handle; });
  if (it == state->registrations.end()) return fail(ncclInvalidUsage, "ncclCommDeregister: could not find handle");
  if (--(*it)->refs == 0) state->registrations.erase(it);
  return ncclSuccess;
}
