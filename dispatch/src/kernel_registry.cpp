#include "syncopate/dispatch/kernel_registry.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "syncopate/dispatch/address_map.hpp"
#include "syncopate/dispatch/log.hpp"
#include "syncopate/dispatch/chain.hpp"

namespace syncopate::preload {
namespace {

// Large programs register tens of thousands of kernels (a PyTorch build: ~50k). The maps are
// static zero pages, so their size costs address space, not memory.
constinit AddressMap<KernelInfo, 18> byHostFunction;
constinit AddressMap<KernelInfo, 18> byKernelHandle;
constinit AddressMap<KernelInfo, 16> byDriverFunction;

const char* copyOf(const char* text) noexcept {
  const char* copy = text != nullptr ? strdup(text) : nullptr;
  return copy != nullptr ? copy : "<unnamed kernel>";
}

const char* demangledOrSame(const char* mangled) noexcept {
  if (mangled == nullptr) return "<unnamed kernel>";
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status == 0 && demangled != nullptr) return demangled;
  std::free(demangled);
  return mangled;
}

}  // namespace

KernelInfo* KernelRegistry::add(const void* hostFunction, const char* mangledName) noexcept {
  auto* info = new (std::nothrow) KernelInfo;
  if (info == nullptr) return nullptr;
  info->hostFunction = hostFunction;
  info->mangledName = copyOf(mangledName);
  info->displayName = demangledOrSame(info->mangledName);
  return info;
}

void KernelRegistry::registerHostFunction(const void* hostFunction, const char* mangledName) noexcept {
  if (hostFunction == nullptr) return;
  KernelInfo* info = add(hostFunction, mangledName);
  if (info == nullptr || !byHostFunction.insert(reinterpret_cast<std::uintptr_t>(hostFunction), info)) {
    overflow_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  changed();
}

void KernelRegistry::registerKernelHandle(cudaKernel_t kernel, const void* hostFunction) noexcept {
  if (kernel == nullptr) return;
  KernelInfo* info = byHostFunction.find(reinterpret_cast<std::uintptr_t>(hostFunction));
  if (info == nullptr) return;  // not a registered stub: named on first launch instead
  if (!byKernelHandle.insert(reinterpret_cast<std::uintptr_t>(kernel), info)) {
    overflow_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  changed();
}

const KernelInfo* KernelRegistry::findLaunched(const void* hostFunctionOrKernel) const noexcept {
  auto key = reinterpret_cast<std::uintptr_t>(hostFunctionOrKernel);
  if (const KernelInfo* info = byHostFunction.find(key)) return info;
  return byKernelHandle.find(key);
}

const KernelInfo* KernelRegistry::findOrNameRuntimeFunction(const void* function) noexcept {
  if (const KernelInfo* info = findLaunched(function)) return info;
  const char* name = nullptr;
  const CudartHelpers* helpers = cudartHelpers();
  if (helpers == nullptr || helpers->cudaFuncGetName == nullptr ||
      helpers->cudaFuncGetName(&name, function) != cudaSuccess) {
    name = nullptr;
  }
  KernelInfo* info = add(function, name);
  if (info == nullptr || !byHostFunction.insert(reinterpret_cast<std::uintptr_t>(function), info)) {
    overflow_.fetch_add(1, std::memory_order_relaxed);
  } else {
    changed();
  }
  return info;
}

const KernelInfo* KernelRegistry::findOrNameDriverFunction(CUfunction function) noexcept {
  auto key = reinterpret_cast<std::uintptr_t>(function);
  if (const KernelInfo* info = byDriverFunction.find(key)) return info;
  const char* name = nullptr;
  bool library_kernel = false;
  const DriverHelpers* helpers = driverHelpers();
  if (helpers == nullptr || helpers->cuFuncGetName == nullptr || helpers->cuFuncGetName(&name, function) != CUDA_SUCCESS) {
    name = nullptr;
    // cuBLAS and cuBLASLt launch the CUkernels of the libraries they load (cuLibraryGetKernel),
    // which the CUfunction queries refuse.
    library_kernel = helpers != nullptr && helpers->cuKernelGetName != nullptr &&
                     helpers->cuKernelGetName(&name, reinterpret_cast<CUkernel>(function)) == CUDA_SUCCESS;
    if (!library_kernel) name = nullptr;
  }
  KernelInfo* info = add(nullptr, name);
  if (info != nullptr) {
    info->driverFunction = function;
    info->libraryKernel = library_kernel;
  }
  if (info == nullptr || !byDriverFunction.insert(key, info)) {
    overflow_.fetch_add(1, std::memory_order_relaxed);
  } else {
    changed();
  }
  return info;
}

KernelRegistry& kernelRegistry() noexcept {
  static constinit KernelRegistry registry;
  return registry;
}

const KernelInfo* launchedKernel(cudaKernel_t handle, CUfunction function, const void* stub) noexcept {
  if (handle != nullptr) return kernelRegistry().findLaunched(handle);
  if (function != nullptr) return kernelRegistry().findOrNameDriverFunction(function);
  return kernelRegistry().findOrNameRuntimeFunction(stub);
}

RegisterFunctionFn realRegisterFunction() noexcept {
  static std::atomic<RegisterFunctionFn> real{nullptr};
  RegisterFunctionFn function = real.load(std::memory_order_acquire);
  if (function == nullptr) {
    function = reinterpret_cast<RegisterFunctionFn>(resolveRealCudart("__cudaRegisterFunction"));
    if (function == nullptr) {
      log(LogLevel::Error, "__cudaRegisterFunction of the CUDA runtime was not found; kernels cannot be registered");
      return nullptr;
    }
    real.store(function, std::memory_order_release);
  }
  return function;
}

}  // namespace syncopate::preload
