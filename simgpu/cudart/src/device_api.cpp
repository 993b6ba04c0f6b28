// Devices: count, current device, properties and attributes, synchronisation, reset, memory
// information, flags, peer access. Properties the profile does not set are those of an H100
// SXM, the device the default profile stands for.
#include "api.hpp"
#include "capture.hpp"
#include "limits.hpp"

#include <simgpu/core/memory.hpp>
#include <simgpu/core/runtime.hpp>
#include <simgpu/core/streams.hpp>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

using namespace simgpu;
using namespace simgpu::cudart;

namespace {

constexpr int kClockRateKHz = 1980000;
constexpr int kMemoryClockRateKHz = 2619000;

void fillProperties(int device, cudaDeviceProp* p) {
  const Profile& prof = profile();
  std::memset(p, 0, sizeof(*p));
  std::snprintf(p->name, sizeof(p->name), "%s", prof.device.name.c_str());
  for (std::size_t i = 0; i < sizeof(p->uuid.bytes); ++i)
    p->uuid.bytes[i] = static_cast<char>(0x51 + i * 7 + static_cast<std::size_t>(device) * 13);
  p->totalGlobalMem = prof.device.memory_bytes;
  p->sharedMemPerBlock = 48 * 1024;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->memPitch = 2147483647;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  p->totalConstMem = 65536;
  p->major = prof.device.compute_capability_major;
  p->minor = prof.device.compute_capability_minor;
  p->textureAlignment = 512;
  p->texturePitchAlignment = 32;
  p->multiProcessorCount = prof.device.sm_count;
  p->canMapHostMemory = 1;
  p->surfaceAlignment = 512;
  p->concurrentKernels = 1;
  p->pciBusID = 0x18 + device;
  p->asyncEngineCount = 3;
  p->unifiedAddressing = 1;
  p->memoryBusWidth = 5120;
  p->l2CacheSize = 50 * 1024 * 1024;
  p->persistingL2CacheMaxSize = 32 * 1024 * 1024;
  p->maxThreadsPerMultiProcessor = 2048;
  p->streamPrioritiesSupported = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = 233472;
  p->regsPerMultiprocessor = 65536;
  p->managedMemory = 1;
  p->concurrentManagedAccess = 1;
  p->computePreemptionSupported = 1;
  p->canUseHostPointerForRegisteredMem = 1;
  p->cooperativeLaunch = 1;
  p->sharedMemPerBlockOptin = 232448;
  p->maxBlocksPerMultiProcessor = 32;
  p->accessPolicyMaxWindowSize = 134213632;
  p->reservedSharedMemPerBlock = 1024;
  p->hostRegisterSupported = 1;
  p->memoryPoolsSupported = 1;
  p->clusterLaunch = 1;
  p->unifiedFunctionPointers = 1;
  p->deviceNumaId = -1;
  p->hostNumaId = -1;
}

// Attributes answered from the properties (and two clocks the properties no longer carry).
bool attributeValue(cudaDeviceAttr attr, const cudaDeviceProp& p, int& value) {
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: value = p.maxThreadsPerBlock; return true;
    case cudaDevAttrMaxBlockDimX: value = p.maxThreadsDim[0]; return true;
    case cudaDevAttrMaxBlockDimY: value = p.maxThreadsDim[1]; return true;
    case cudaDevAttrMaxBlockDimZ: value = p.maxThreadsDim[2]; return true;
    case cudaDevAttrMaxGridDimX: value = p.maxGridSize[0]; return true;
    case cudaDevAttrMaxGridDimY: value = p.maxGridSize[1]; return true;
    case cudaDevAttrMaxGridDimZ: value = p.maxGridSize[2]; return true;
    case cudaDevAttrMaxSharedMemoryPerBlock: value = static_cast<int>(p.sharedMemPerBlock); return true;
    case cudaDevAttrTotalConstantMemory: value = static_cast<int>(p.totalConstMem); return true;
    case cudaDevAttrWarpSize: value = p.warpSize; return true;
    case cudaDevAttrMaxPitch: value = static_cast<int>(p.memPitch); return true;
    case cudaDevAttrMaxRegistersPerBlock: value = p.regsPerBlock; return true;
    case cudaDevAttrClockRate: value = kClockRateKHz; return true;
    case cudaDevAttrTextureAlignment: value = static_cast<int>(p.textureAlignment); return true;
    case cudaDevAttrGpuOverlap: value = 1; return true;
    case cudaDevAttrMultiProcessorCount: value = p.multiProcessorCount; return true;
    case cudaDevAttrKernelExecTimeout: value = 0; return true;
    case cudaDevAttrIntegrated: value = p.integrated; return true;
    case cudaDevAttrCanMapHostMemory: value = p.canMapHostMemory; return true;
    case cudaDevAttrComputeMode: value = cudaComputeModeDefault; return true;
    case cudaDevAttrSurfaceAlignment: value = static_cast<int>(p.surfaceAlignment); return true;
    case cudaDevAttrConcurrentKernels: value = p.concurrentKernels; return true;
    case cudaDevAttrEccEnabled: value = p.ECCEnabled; return true;
    case cudaDevAttrPciBusId: value = p.pciBusID; return true;
    case cudaDevAttrPciDeviceId: value = p.pciDeviceID; return true;
    case cudaDevAttrPciDomainId: value = p.pciDomainID; return true;
    case cudaDevAttrTccDriver: value = p.tccDriver; return true;
    case cudaDevAttrMemoryClockRate: value = kMemoryClockRateKHz; return true;
    case cudaDevAttrGlobalMemoryBusWidth: value = p.memoryBusWidth; return true;
    case cudaDevAttrL2CacheSize: value = p.l2CacheSize; return true;
    case cudaDevAttrMaxThreadsPerMultiProcessor: value = p.maxThreadsPerMultiProcessor; return true;
    case cudaDevAttrAsyncEngineCount: value = p.asyncEngineCount; return true;
    case cudaDevAttrUnifiedAddressing: value = p.unifiedAddressing; return true;
    case cudaDevAttrTexturePitchAlignment: value = static_cast<int>(p.texturePitchAlignment); return true;
    case cudaDevAttrComputeCapabilityMajor: value = p.major; return true;
    case cudaDevAttrComputeCapabilityMinor: value = p.minor; return true;
    case cudaDevAttrStreamPrioritiesSupported: value = p.streamPrioritiesSupported; return true;
    case cudaDevAttrGlobalL1CacheSupported: value = p.globalL1CacheSupported; return true;
    case cudaDevAttrLocalL1CacheSupported: value = p.localL1CacheSupported; return true;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: value = static_cast<int>(p.sharedMemPerMultiprocessor); return true;
    case cudaDevAttrMaxRegistersPerMultiprocessor: value = p.regsPerMultiprocessor; return true;
    case cudaDevAttrManagedMemory: value = p.managedMemory; return true;
    case cudaDevAttrIsMultiGpuBoard: value = p.isMultiGpuBoard; return true;
    case cudaDevAttrMultiGpuBoardGroupID: value = p.multiGpuBoardGroupID; return true;
    case cudaDevAttrHostNativeAtomicSupported: value = p.hostNativeAtomicSupported; return true;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio: value = 2; return true;
    case cudaDevAttrPageableMemoryAccess: value = p.pageableMemoryAccess; return true;
    case cudaDevAttrConcurrentManagedAccess: value = p.concurrentManagedAccess; return true;
    case cudaDevAttrComputePreemptionSupported: value = p.computePreemptionSupported; return true;
    case cudaDevAttrCanUseHostPointerForRegisteredMem: value = p.canUseHostPointerForRegisteredMem; return true;
    case cudaDevAttrCooperativeLaunch: value = p.cooperativeLaunch; return true;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: value = static_cast<int>(p.sharedMemPerBlockOptin); return true;
    case cudaDevAttrCanFlushRemoteWrites: value = 0; return true;
    case cudaDevAttrHostRegisterSupported: value = p.hostRegisterSupported; return true;
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables: value = p.pageableMemoryAccessUsesHostPageTables; return true;
    case cudaDevAttrDirectManagedMemAccessFromHost: value = p.directManagedMemAccessFromHost; return true;
    case cudaDevAttrMaxBlocksPerMultiprocessor: value = p.maxBlocksPerMultiProcessor; return true;
    case cudaDevAttrMaxPersistingL2CacheSize: value = p.persistingL2CacheMaxSize; return true;
    case cudaDevAttrMaxAccessPolicyWindowSize: value = p.accessPolicyMaxWindowSize; return true;
    case cudaDevAttrReservedSharedMemoryPerBlock: value = static_cast<int>(p.reservedSharedMemPerBlock); return true;
    case cudaDevAttrHostRegisterReadOnlySupported: value = p.hostRegisterReadOnlySupported; return true;
    case cudaDevAttrMemoryPoolsSupported: value = p.memoryPoolsSupported; return true;
    case cudaDevAttrGPUDirectRDMASupported: value = p.gpuDirectRDMASupported; return true;
    case cudaDevAttrClusterLaunch: value = p.clusterLaunch; return true;
    case cudaDevAttrIpcEventSupport: value = p.ipcEventSupported; return true;
    case cudaDevAttrNumaConfig: value = p.deviceNumaConfig; return true;
    case cudaDevAttrNumaId: value = p.deviceNumaId; return true;
    case cudaDevAttrMpsEnabled: value = p.mpsEnabled; return true;
    case cudaDevAttrHostNumaId: value = p.hostNumaId; return true;
    default: return false;
  }
}

struct PeerAccess {
  std::mutex mu;
  std::set<std::pair<int, int>> enabled;  // (device, peer)
};

PeerAccess& peerAccess() {
  static PeerAccess* const p = new PeerAccess();
  return *p;
}

}  // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = initialize(); err != cudaSuccess) return fail(err);
  *count = deviceCount();
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return fail(err);
  return done(setCurrentDevice(device));
}

cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return fail(err);
  if (!validDevice(device)) return fail(cudaErrorInvalidDevice);
  if (flags != 0) return fail(cudaErrorInvalidValue);
  setDeviceFlags(device, deviceFlags);
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = initialize(); err != cudaSuccess) return fail(err);
  *device = currentDevice();
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (prop == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = initialize(); err != cudaSuccess) return fail(err);
  if (!validDevice(device)) return fail(cudaErrorInvalidDevice);
  fillProperties(device, prop);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (value == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = initialize(); err != cudaSuccess) return fail(err);
  if (!validDevice(device)) return fail(cudaErrorInvalidDevice);
  cudaDeviceProp prop;
  fillProperties(device, &prop);
  if (!attributeValue(attr, prop, *value)) {
    reportNotSimulated("cudaDeviceGetAttribute(attribute " + std::to_string(static_cast<int>(attr)) + ")");
    return fail(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return fail(err);
  if (leastPriority != nullptr) *leastPriority = kLeastStreamPriority;
  if (greatestPriority != nullptr) *greatestPriority = kGreatestStreamPriority;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (auto refused = refuseUnsafeDuringCapture()) return fail(*refused);
  return done(afterHostSync(synchronizeDevice(currentDevice())));
}

cudaError_t cudaDeviceReset(void) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return fail(err);
  resetLimits(currentDevice());
  return done(resetDevice(currentDevice()));
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  if (free == nullptr || total == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  memoryInfo(currentDevice(), free, total);
  return cudaSuccess;
}

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  constexpr unsigned known = cudaDeviceScheduleMask | cudaDeviceMapHost | cudaDeviceLmemResizeToMax |
                             cudaDeviceSyncMemops;
  if ((flags & ~known) != 0) return fail(cudaErrorInvalidValue);
  setDeviceFlags(currentDevice(), flags);
  return cudaSuccess;
}

cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  if (flags == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  // Mapped host memory is always on with unified addressing, as on real devices.
  *flags = deviceFlags(currentDevice()) | cudaDeviceMapHost;
  return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice) {
  if (canAccessPeer == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = initialize(); err != cudaSuccess) return fail(err);
  if (!validDevice(device) || !validDevice(peerDevice)) return fail(cudaErrorInvalidDevice);
  *canAccessPeer = device != peerDevice ? 1 : 0;
  return cudaSuccess;
}

// Peer access only gates what a real device may touch; simulated memory is all host memory,
// so simgpu tracks the setting for CUDA's error codes and nothing else.
cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (flags != 0) return fail(cudaErrorInvalidValue);
  if (!validDevice(peerDevice) || peerDevice == currentDevice()) return fail(cudaErrorInvalidDevice);
  PeerAccess& peers = peerAccess();
  std::lock_guard lock(peers.mu);
  if (!peers.enabled.emplace(currentDevice(), peerDevice).second) return fail(cudaErrorPeerAccessAlreadyEnabled);
  return cudaSuccess;
}

cudaError_t cudaDeviceDisablePeerAccess(int peerDevice) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (!validDevice(peerDevice)) return fail(cudaErrorInvalidDevice);
  PeerAccess& peers = peerAccess();
  std::lock_guard lock(peers.mu);
  if (peers.enabled.erase({currentDevice(), peerDevice}) == 0) return fail(cudaErrorPeerAccessNotEnabled);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  if (pciBusId == nullptr || len <= 0) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = initialize(); err != cudaSuccess) return fail(err);
  if (!validDevice(device)) return fail(cudaErrorInvalidDevice);
  std::snprintf(pciBusId, static_cast<std::size_t>(len), "0000:%02X:00.0", 0x18 + device);
  return cudaSuccess;
}

}  // extern "C"
