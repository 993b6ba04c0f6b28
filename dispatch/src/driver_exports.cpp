// The CUDA driver symbols the preload library exports. Each forwards to the top of the
// driver's dispatch chain (allocations and frees also keep the map of device memory,
// exported_call.hpp); cuGetProcAddress also hands out interposers (proc_address.hpp).
#include "exported_call.hpp"
#include "syncopate/dispatch/export.hpp"
#include "syncopate/dispatch/chain.hpp"
#include "syncopate/dispatch/proc_address.hpp"

#include "syncopate/dispatch/call_roles.inc"
#define SYNCOPATE_DRIVER(ret, name, params, args, what, ...)                                                 \
  extern "C" SYNCOPATE_EXPORT ret name params {                                                            \
    SYNCOPATE_EXPORTED_CALL(::syncopate::trace::ApiDomain::CudaDriver, ::syncopate::preload::driver(), name, \
                            args, what, __VA_ARGS__)                                                       \
  }
#define SYNCOPATE_DRIVER_MANUAL(ret, name, params, args, what, roles)
#include "syncopate/dispatch/driver_api.inc"
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER
#include "syncopate/dispatch/call_roles_end.inc"

namespace sp = ::syncopate::preload;

extern "C" SYNCOPATE_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion,
                                                     cuuint64_t flags) {
  CUresult result = sp::driver().cuGetProcAddress(symbol, pfn, cudaVersion, flags);
  if (result == CUDA_SUCCESS) sp::handOutDriverInterposer(symbol, pfn);
  return result;
}

extern "C" SYNCOPATE_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion,
                                                        cuuint64_t flags, CUdriverProcAddressQueryResult* symbolStatus) {
  CUresult result = sp::driver().cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus);
  if (result == CUDA_SUCCESS) sp::handOutDriverInterposer(symbol, pfn);
  return result;
}
