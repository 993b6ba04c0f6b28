// Names of kernels, known to every layer: the runtime registers each kernel's host stub with
// its mangled device name (__cudaRegisterFunction) when a module loads, and hands out
// cudaKernel_t handles for stubs (__cudaGetKernel); kernels launched through the driver are
// named on first sight by the driver itself. Filled whether or not anything is recording,
// because registration happens once, at load time.
#pragma once

#include <atomic>
#include <cstdint>

#include "syncopate/dispatch/call_facts.hpp"
#include "syncopate/dispatch/cuda_headers.hpp"

namespace syncopate::preload {

struct ParamLayout;

struct KernelInfo {
  const void* hostFunction = nullptr;  // the stub a launch names (null for driver functions)
  CUfunction driverFunction = nullptr; // the driver function (null for runtime kernels)
  // driverFunction is a CUkernel of the library API (cuLibraryGetKernel), which cuLaunchKernel
  // takes in place of a CUfunction: named and queried through cuKernelGetName/ParamInfo.
  bool libraryKernel = false;
  const char* mangledName = nullptr;   // as registered (owned, never freed)
  const char* displayName = nullptr;   // demangled when it demangles, else the mangled name
  // Its parameter layout, learnt at its first launch (kernel_layout.hpp); null until then.
  mutable std::atomic<const ParamLayout*> layout{nullptr};

  // The recorder's interned id of displayName, tagged with the recorder generation it belongs
  // to (generation << 32 | id); 0 = not interned yet.
  std::atomic<std::uint64_t> recorderName{0};
};

class KernelRegistry {
 public:
  void registerHostFunction(const void* hostFunction, const char* mangledName) noexcept;
  void registerKernelHandle(cudaKernel_t kernel, const void* hostFunction) noexcept;

  // What a runtime launch names: a registered stub, or a cudaKernel_t handed out for one. Null
  // when unknown (a kernel from a library loaded through the driver's module API, say).
  const KernelInfo* findLaunched(const void* hostFunctionOrKernel) const noexcept;

  // A driver function, named through cuFuncGetName on first sight (cold path, then cached); a
  // handle that query refuses is asked as a library kernel (cuKernelGetName).
  const KernelInfo* findOrNameDriverFunction(CUfunction function) noexcept;

  // A runtime function nobody registered: named through cudaFuncGetName, then cached.
  const KernelInfo* findOrNameRuntimeFunction(const void* function) noexcept;

  // How many registrations did not fit (the maps are fixed-size).
  std::uint64_t overflowCount() const noexcept { return overflow_.load(std::memory_order_relaxed); }

  // Counts every change to what a launch names (a kernel registered, named, or registered again
  // at an address a module unloaded had used): a cache of lookups made while it read the same
  // value holds what a lookup would return now.
  std::uint32_t changes() const noexcept { return changes_.load(std::memory_order_acquire); }

 private:
  static KernelInfo* add(const void* hostFunction, const char* mangledName) noexcept;
  void changed() noexcept { changes_.fetch_add(1, std::memory_order_acq_rel); }

  std::atomic<std::uint64_t> overflow_{0};
  std::atomic<std::uint32_t> changes_{0};
};

KernelRegistry& kernelRegistry() noexcept;

// The kernel a launch names, however it names it (a cudaKernel_t, a driver function or a host
// stub: the first that is not null); null when the registry cannot say.
const KernelInfo* launchedKernel(cudaKernel_t handle, CUfunction function, const void* stub) noexcept;
inline const KernelInfo* launchedKernel(const CallFacts& launch) noexcept {
  return launchedKernel(launch.kernel_handle, launch.kernel_function, launch.kernel_stub);
}

// The real __cudaRegisterFunction (null if the runtime is not loaded yet).
using RegisterFunctionFn = void (*)(void**, const char*, char*, const char*, int, uint3*, uint3*, dim3*, dim3*, int*);
RegisterFunctionFn realRegisterFunction() noexcept;

}  // namespace syncopate::preload
