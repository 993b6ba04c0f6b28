// Versions, driver entry points (simgpu has no driver API), and small value helpers.
#include "api.hpp"

#include <cuda_runtime_api.h>

#include <string>

using namespace simgpu;
using namespace simgpu::cudart;

namespace {

cudaError_t noDriverEntryPoint(const char* symbol, void** funcPtr, cudaDriverEntryPointQueryResult* status) {
  if (symbol == nullptr || funcPtr == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = initialize(); err != cudaSuccess) return fail(err);
  *funcPtr = nullptr;
  if (status != nullptr) *status = cudaDriverEntryPointSymbolNotFound;
  reportNotSimulated(std::string("cudaGetDriverEntryPoint(") + symbol + ") (simgpu has no driver API)");
  return fail(cudaErrorNotSupported);
}

}  // namespace

extern "C" {

cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
  if (runtimeVersion == nullptr) return fail(cudaErrorInvalidValue);
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}

// The simulated driver's version is the profile's (by default as new as this runtime).
cudaError_t cudaDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return fail(cudaErrorInvalidValue);
  *driverVersion = profile().driver_version;
  return cudaSuccess;
}

cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long /*flags*/,
                                    cudaDriverEntryPointQueryResult* driverStatus) {
  return noDriverEntryPoint(symbol, funcPtr, driverStatus);
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr, unsigned long long /*flags*/,
                                         cudaDriverEntryPointQueryResult* driverStatus) {
  return noDriverEntryPoint(symbol, funcPtr, driverStatus);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int /*cudaVersion*/,
                                             unsigned long long /*flags*/,
                                             cudaDriverEntryPointQueryResult* driverStatus) {
  return noDriverEntryPoint(symbol, funcPtr, driverStatus);
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** funcPtr, unsigned int /*cudaVersion*/,
                                                  unsigned long long /*flags*/,
                                                  cudaDriverEntryPointQueryResult* driverStatus) {
  return noDriverEntryPoint(symbol, funcPtr, driverStatus);
}

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
  return cudaChannelFormatDesc{x, y, z, w, f};
}

// Without a profiler attached these do nothing on a real device either.
cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
cudaError_t cudaProfilerStop(void) { return cudaSuccess; }

}  // extern "C"
