// Error names and strings, and the last-error rules: every failing call records its error
// for the calling thread; cudaGetLastError returns and clears it, cudaPeekAtLastError only
// returns it; a sticky error (the device's context is corrupted) is returned by both, and
// by every later call, until cudaDeviceReset.
#include "api.hpp"

#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace simgpu::cudart {
namespace {

thread_local cudaError_t t_last_error = cudaSuccess;

struct ErrorName {
  cudaError_t code;
  const char* name;
};

constexpr ErrorName kErrorNames[] = {
#include "error_names.inc"
};

// Messages as the CUDA runtime prints them, for the errors a simulated program meets.
constexpr ErrorName kErrorStrings[] = {
    {cudaSuccess, "no error"},
    {cudaErrorInvalidValue, "invalid argument"},
    {cudaErrorMemoryAllocation, "out of memory"},
    {cudaErrorInitializationError, "initialization error"},
    {cudaErrorCudartUnloading, "driver shutting down"},
    {cudaErrorInvalidConfiguration, "invalid configuration argument"},
    {cudaErrorInvalidPitchValue, "invalid pitch argument"},
    {cudaErrorInvalidSymbol, "invalid device symbol"},
    {cudaErrorInvalidHostPointer, "invalid host pointer"},
    {cudaErrorInvalidDevicePointer, "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy"},
    {cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorNoDevice, "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "invalid device ordinal"},
    {cudaErrorInvalidKernelImage, "device kernel image is invalid"},
    {cudaErrorInvalidResourceHandle, "invalid resource handle"},
    {cudaErrorIllegalState, "the operation cannot be performed in the present state"},
    {cudaErrorSymbolNotFound, "named symbol not found"},
    {cudaErrorNotReady, "device not ready"},
    {cudaErrorIllegalAddress, "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "too many resources requested for launch"},
    {cudaErrorLaunchTimeout, "the launch timed out and was terminated"},
    {cudaErrorPeerAccessAlreadyEnabled, "peer access is already enabled"},
    {cudaErrorPeerAccessNotEnabled, "peer access has not been enabled"},
    {cudaErrorSetOnActiveProcess, "cannot set while device is active in this process"},
    {cudaErrorContextIsDestroyed, "context is destroyed"},
    {cudaErrorAssert, "device-side assert triggered"},
    {cudaErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped"},
    {cudaErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region"},
    {cudaErrorLaunchFailure, "unspecified launch failure"},
    {cudaErrorNotSupported, "operation not supported"},
    {cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing"},
    {cudaErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture"},
    {cudaErrorStreamCaptureUnmatched, "capture was not initiated in this stream"},
    {cudaErrorStreamCaptureUnjoined, "capturing stream has unjoined work"},
    {cudaErrorStreamCaptureWrongThread, "attempt to terminate a thread-local capture sequence from another thread"},
    {cudaErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream"},
    {cudaErrorInvalidDeviceFunction, "invalid device function"},
    {cudaErrorUnknown, "unknown error"},
};

}  // namespace

cudaError_t fail(cudaError_t error) {
  if (error != cudaErrorNotReady) t_last_error = error;
  return error;
}

void reportNotSimulated(const std::string& what) {
  static std::mutex mu;
  static std::set<std::string> reported;
  std::lock_guard lock(mu);
  if (reported.insert(what).second) std::fprintf(stderr, "simgpu: %s is not simulated\n", what.c_str());
}

cudaError_t enter() {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  return stickyError(currentDevice());
}

}  // namespace simgpu::cudart

using namespace simgpu::cudart;

extern "C" {

cudaError_t cudaGetLastError(void) {
  const cudaError_t last = t_last_error;
  t_last_error = cudaSuccess;
  if (cudaError_t err = enter(); err != cudaSuccess) return err;
  return last;
}

cudaError_t cudaPeekAtLastError(void) {
  if (cudaError_t err = enter(); err != cudaSuccess) return err;
  return t_last_error;
}

const char* cudaGetErrorName(cudaError_t error) {
  for (const ErrorName& e : kErrorNames)
    if (e.code == error) return e.name;
  return "unrecognized error code";
}

const char* cudaGetErrorString(cudaError_t error) {
  for (const ErrorName& e : kErrorStrings)
    if (e.code == error) return e.name;
  for (const ErrorName& e : kErrorNames)
    if (e.code == error) return e.name;  // a known code without a message of its own: its name
  return "unrecognized error code";
}

int simgpu_cudart_not_simulated(const char* name, int* reported) {
  if (!__atomic_exchange_n(reported, 1, __ATOMIC_ACQ_REL))
    std::fprintf(stderr, "simgpu: %s is not simulated\n", name);
  return fail(cudaErrorNotSupported);
}

}  // extern "C"
