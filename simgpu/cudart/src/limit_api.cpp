// Device limits: kept per device as CUDA documents them, back to their defaults when the
// device is reset. simgpu runs no device code, so a limit changes only what is read back; what
// CUDA refuses is refused the same way. Not modelled: setting the printf FIFO or malloc heap
// size after a kernel that uses them was launched (cudaErrorInvalidValue on a GPU), since
// simgpu cannot tell which kernels do, and reservations of device memory for the limits.
#include "api.hpp"
#include "limits.hpp"

#include <simgpu/core/runtime.hpp>

#include <algorithm>
#include <array>
#include <mutex>
#include <vector>

using namespace simgpu;
using namespace simgpu::cudart;

namespace {

constexpr std::size_t kLimits = cudaLimitPersistingL2CacheSize + 1;
constexpr std::array<std::size_t, kLimits> kDefaults = {
    1024,       // cudaLimitStackSize
    1u << 20,   // cudaLimitPrintfFifoSize
    8u << 20,   // cudaLimitMallocHeapSize
    2,          // cudaLimitDevRuntimeSyncDepth
    2048,       // cudaLimitDevRuntimePendingLaunchCount
    64,         // cudaLimitMaxL2FetchGranularity
    0,          // cudaLimitPersistingL2CacheSize
};
constexpr std::size_t kMaxSyncDepth = 24;
constexpr std::size_t kMaxL2FetchGranularity = 128;

struct Limits {
  std::mutex mu;
  std::vector<std::array<std::size_t, kLimits>> by_device;
};

Limits& limits() {
  static Limits* const l = new Limits();
  return *l;
}

std::array<std::size_t, kLimits>& deviceLimits(Limits& l, int device) {
  if (l.by_device.empty()) l.by_device.assign(static_cast<std::size_t>(deviceCount()), kDefaults);
  return l.by_device[static_cast<std::size_t>(device)];
}

// Whether the current device has `limit` at all: the device runtime's synchronisation depth
// is gone from compute capability 9.0 on.
bool supported(cudaLimit limit) {
  if (static_cast<std::size_t>(limit) >= kLimits) return false;
  return limit != cudaLimitDevRuntimeSyncDepth || profile().device.compute_capability_major < 9;
}

}  // namespace

namespace simgpu::cudart {

void resetLimits(int device) {
  Limits& l = limits();
  std::lock_guard lock(l.mu);
  deviceLimits(l, device) = kDefaults;
}

}  // namespace simgpu::cudart

extern "C" {

cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (!supported(limit)) return fail(cudaErrorUnsupportedLimit);
  const int device = currentDevice();
  switch (limit) {
    case cudaLimitDevRuntimeSyncDepth:
      if (value > kMaxSyncDepth) return fail(cudaErrorInvalidValue);
      break;
    case cudaLimitMaxL2FetchGranularity: value = std::min(value, kMaxL2FetchGranularity); break;
    case cudaLimitPersistingL2CacheSize: {
      int most = 0;  // the driver clamps a hint to what the device has
      if (cudaError_t err = cudaDeviceGetAttribute(&most, cudaDevAttrMaxPersistingL2CacheSize, device); err != cudaSuccess)
        return fail(err);
      value = std::min(value, static_cast<std::size_t>(most));
      break;
    }
    default: break;
  }
  Limits& l = limits();
  std::lock_guard lock(l.mu);
  deviceLimits(l, device)[static_cast<std::size_t>(limit)] = value;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetLimit(size_t* pValue, cudaLimit limit) {
  if (pValue == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (!supported(limit)) return fail(cudaErrorUnsupportedLimit);
  Limits& l = limits();
  std::lock_guard lock(l.mu);
  *pValue = deviceLimits(l, currentDevice())[static_cast<std::size_t>(limit)];
  return cudaSuccess;
}

}  // extern "C"
