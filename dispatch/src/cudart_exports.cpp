// The CUDA runtime symbols the preload library exports. Each forwards to the top of the
// runtime's dispatch chain (see layer.hpp); allocations and frees also keep the map of device
// memory (exported_call.hpp); the few that need more are written out below.
#include "exported_call.hpp"
#include "syncopate/dispatch/export.hpp"
#include "syncopate/dispatch/chain.hpp"
#include "syncopate/dispatch/kernel_registry.hpp"
#include "syncopate/dispatch/proc_address.hpp"

// The roles are the last, variadic argument, so that they reach the body unexpanded.
#include "syncopate/dispatch/call_roles.inc"
#define SYNCOPATE_CUDART(ret, name, params, args, what, ...)                                                  \
  extern "C" SYNCOPATE_EXPORT ret name params {                                                             \
    SYNCOPATE_EXPORTED_CALL(::syncopate::trace::ApiDomain::CudaRuntime, ::syncopate::preload::cudart(), name, \
                            args, what, __VA_ARGS__)                                                        \
  }
#define SYNCOPATE_CUDART_MANUAL(ret, name, params, args, what, roles)
#include "syncopate/dispatch/cudart_api.inc"
#undef SYNCOPATE_CUDART_MANUAL
#undef SYNCOPATE_CUDART
#include "syncopate/dispatch/call_roles_end.inc"

namespace sp = ::syncopate::preload;

// Kernel names: every kernel of every module is registered here once at load time, before any
// layer may want its name. Not a dispatch-table entry: it returns nothing and is never
// reordered, only observed.
extern "C" SYNCOPATE_EXPORT void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                                                        const char* deviceName, int thread_limit, uint3* tid,
                                                        uint3* bid, dim3* bDim, dim3* gDim, int* wSize) {
  sp::kernelRegistry().registerHostFunction(hostFun, deviceName);
  if (auto real = sp::realRegisterFunction()) {
    real(fatCubinHandle, hostFun, deviceFun, deviceName, thread_limit, tid, bid, bDim, gDim, wSize);
  }
}

// Kernel handles of the CUDA 13 launch path: the registry learns which stub each one names.
extern "C" SYNCOPATE_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun) {
  cudaError_t result = sp::cudart().__cudaGetKernel(kernel, hostFun);
  if (result == cudaSuccess && kernel != nullptr) sp::kernelRegistry().registerKernelHandle(*kernel, hostFun);
  return result;
}

extern "C" SYNCOPATE_EXPORT cudaError_t cudaGetKernel(cudaKernel_t* kernel, const void* entryFuncAddr) {
  cudaError_t result = sp::cudart().cudaGetKernel(kernel, entryFuncAddr);
  if (result == cudaSuccess && kernel != nullptr) sp::kernelRegistry().registerKernelHandle(*kernel, entryFuncAddr);
  return result;
}

// Driver entry points handed out by the runtime go through the same driver interposers as
// direct calls, when they are the functions the interposers stand for.
extern "C" SYNCOPATE_EXPORT cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr,
                                                               unsigned long long flags,
                                                               cudaDriverEntryPointQueryResult* driverStatus) {
  cudaError_t result = sp::cudart().cudaGetDriverEntryPoint(symbol, funcPtr, flags, driverStatus);
  if (result == cudaSuccess) sp::handOutDriverInterposer(symbol, funcPtr);
  return result;
}

extern "C" SYNCOPATE_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr,
                                                                    unsigned long long flags,
                                                                    cudaDriverEntryPointQueryResult* driverStatus) {
  cudaError_t result = sp::cudart().cudaGetDriverEntryPoint_ptsz(symbol, funcPtr, flags, driverStatus);
  if (result == cudaSuccess) sp::handOutDriverInterposer(symbol, funcPtr);
  return result;
}

extern "C" SYNCOPATE_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                                                        unsigned int cudaVersion,
                                                                        unsigned long long flags,
                                                                        cudaDriverEntryPointQueryResult* driverStatus) {
  cudaError_t result = sp::cudart().cudaGetDriverEntryPointByVersion(symbol, funcPtr, cudaVersion, flags, driverStatus);
  if (result == cudaSuccess) sp::handOutDriverInterposer(symbol, funcPtr);
  return result;
}

extern "C" SYNCOPATE_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
    const char* symbol, void** funcPtr, unsigned int cudaVersion, unsigned long long flags,
    cudaDriverEntryPointQueryResult* driverStatus) {
  cudaError_t result =
      sp::cudart().cudaGetDriverEntryPointByVersion_ptsz(symbol, funcPtr, cudaVersion, flags, driverStatus);
  if (result == cudaSuccess) sp::handOutDriverInterposer(symbol, funcPtr);
  return result;
}
