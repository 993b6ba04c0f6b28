// Fat binaries, function and variable registration, and both kernel launch paths: CUDA 13's
// __cudaGetKernel + __cudaLaunchKernel(_ptsz), which nvcc's launch stubs call, and
// cudaLaunchKernel / cudaLaunchKernelExC, which older binaries and libraries call.
#include "api.hpp"
#include "capture.hpp"

#include <simgpu/core/kernels.hpp>
#include <simgpu/core/runtime.hpp>
#include <simgpu/core/symbols.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace simgpu;
using namespace simgpu::cudart;

namespace {

// The stack of <<<...>>> configurations of the calling thread (nvcc pushes one before the
// launch stub runs and the stub pops it).
struct CallConfiguration {
  dim3 grid;
  dim3 block;
  size_t shared_bytes;
  cudaStream_t stream;
};
thread_local std::vector<CallConfiguration> t_configurations;

// The first driver with cudaFuncGetParamInfo / cuFuncGetParamInfo (CUDA 12.4).
constexpr int kFirstDriverWithParamInfo = 12040;

// A registered fat binary; its handle points at `fat_binary`, the first member.
struct Module {
  void* fat_binary;
  ModuleParamLayouts params;
};
Module* moduleOf(void** handle) { return reinterpret_cast<Module*>(handle); }

const KernelInfo* kernelOf(const void* func) {
  if (const KernelInfo* k = findKernel(func)) return k;
  return kernelFromHandle(func);  // cudaLaunchKernelExC also takes a cudaKernel_t
}

cudaError_t launch(const KernelInfo* k, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (k == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  if (auto captured = captureKernel(*k, grid, block, args, shared, stream)) return done(*captured);
  return done(launchKernel(*k, grid, block, args, shared, stream));
}

cudaError_t launchEx(const cudaLaunchConfig_t* config, const void* func, void** args, bool per_thread) {
  if (config == nullptr) return fail(cudaErrorInvalidValue);
  if (config->numAttrs > 0 && config->attrs == nullptr) return fail(cudaErrorInvalidValue);
  // Attributes are scheduling hints (priority, cluster shape, programmatic serialisation...)
  // that do not change a simulated kernel's result or cost; they are accepted as the driver
  // accepts them.
  cudaStream_t stream = per_thread ? perThread(config->stream) : config->stream;
  return launch(kernelOf(func), config->gridDim, config->blockDim, args, config->dynamicSmemBytes, stream);
}

}  // namespace

extern "C" {

void** __cudaRegisterFatBinary(void* fatCubin) {
  // simgpu runs no device code; from the module it keeps what the driver learns from it: the
  // kernels' parameter layouts. The handle is the module's first member.
  auto* module = new Module{fatCubin, readModuleParamLayouts(fatCubin)};
  return &module->fat_binary;
}

void __cudaRegisterFatBinaryEnd(void** /*fatCubinHandle*/) {}

void __cudaUnregisterFatBinary(void** fatCubinHandle) {
  // Kernel and variable entries stay: launches already enqueued may still refer to them.
  delete moduleOf(fatCubinHandle);
}

void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                            const char* deviceName, int /*thread_limit*/, uint3* /*tid*/,
                            uint3* /*bid*/, dim3* /*bDim*/, dim3* /*gDim*/, int* /*wSize*/) {
  const Module* module = fatCubinHandle != nullptr ? moduleOf(fatCubinHandle) : nullptr;
  registerKernel(hostFun, deviceName != nullptr ? deviceName : deviceFun, module != nullptr ? &module->params : nullptr);
}

void __cudaRegisterVar(void** /*fatCubinHandle*/, char* hostVar, char* /*deviceAddress*/,
                       const char* /*deviceName*/, int /*ext*/, size_t size, int /*constant*/,
                       int /*global*/) {
  registerVariable(hostVar, size);
}

void __cudaRegisterManagedVar(void** /*fatCubinHandle*/, void** /*hostVarPtrAddress*/,
                              char* /*deviceAddress*/, const char* deviceName, int /*ext*/,
                              size_t /*size*/, int /*constant*/, int /*global*/) {
  reportNotSimulated(std::string("__cudaRegisterManagedVar (__managed__ variable ") +
                     (deviceName != nullptr ? deviceName : "?") + ")");
}

char __cudaInitModule(void** /*fatCubinHandle*/) { return 1; }

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st* stream) {
  t_configurations.push_back(CallConfiguration{gridDim, blockDim, sharedMem, stream});
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, void* stream) {
  if (t_configurations.empty()) return fail(cudaErrorMissingConfiguration);
  const CallConfiguration c = t_configurations.back();
  t_configurations.pop_back();
  *gridDim = c.grid;
  *blockDim = c.block;
  *sharedMem = c.shared_bytes;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun) {
  if (kernel == nullptr) return fail(cudaErrorInvalidValue);
  const KernelInfo* k = findKernel(hostFun);
  if (k == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<KernelInfo*>(k));
  return cudaSuccess;
}

cudaError_t cudaGetKernel(cudaKernel_t* kernelPtr, const void* entryFuncAddr) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return fail(err);
  return __cudaGetKernel(kernelPtr, entryFuncAddr);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               size_t sharedMem, cudaStream_t stream) {
  return launch(kernelFromHandle(kernel), gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                    size_t sharedMem, cudaStream_t stream) {
  return launch(kernelFromHandle(kernel), gridDim, blockDim, args, sharedMem, perThread(stream));
}

cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem,
                             cudaStream_t stream) {
  return launch(findKernel(func), gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                  size_t sharedMem, cudaStream_t stream) {
  return launch(findKernel(func), gridDim, blockDim, args, sharedMem, perThread(stream));
}

// A cooperative launch only adds grid-wide synchronisation inside the kernel, which a
// simulated kernel does not need.
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                        size_t sharedMem, cudaStream_t stream) {
  return launch(findKernel(func), gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                             size_t sharedMem, cudaStream_t stream) {
  return launch(findKernel(func), gridDim, blockDim, args, sharedMem, perThread(stream));
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  return launchEx(config, func, args, false);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func, void** args) {
  return launchEx(config, func, args, true);
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  if (attr == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const KernelInfo* k = kernelOf(func);
  if (k == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  *attr = cudaFuncAttributes{};
  attr->maxThreadsPerBlock = 1024;
  attr->numRegs = 32;
  const Profile& p = profile();
  attr->ptxVersion = p.device.compute_capability_major * 10 + p.device.compute_capability_minor;
  attr->binaryVersion = attr->ptxVersion;
  attr->maxDynamicSharedSizeBytes = k->max_dynamic_shared_bytes;
  attr->preferredShmemCarveout = -1;
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const KernelInfo* k = kernelOf(func);
  if (k == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
      if (value < 0 || value > 232448 - 1024) return fail(cudaErrorInvalidValue);
      setMaxDynamicSharedBytes(*k, value);
      return cudaSuccess;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
      if (value < -1 || value > 100) return fail(cudaErrorInvalidValue);
      return cudaSuccess;  // a placement hint
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
      return cudaSuccess;  // a permission, not a change of behaviour
    default:
      reportNotSimulated("cudaFuncSetAttribute(attribute " + std::to_string(static_cast<int>(attr)) + ")");
      return fail(cudaErrorNotSupported);
  }
}

cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache /*cacheConfig*/) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return kernelOf(func) != nullptr ? cudaSuccess : fail(cudaErrorInvalidDeviceFunction);  // a hint
}

cudaError_t cudaFuncGetName(const char** name, const void* func) {
  if (name == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const KernelInfo* k = kernelOf(func);
  if (k == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  *name = k->mangled.c_str();
  return cudaSuccess;
}

// As a driver from CUDA 12.4 on answers it; an older one (the profile's driver_version) has no
// such query.
cudaError_t cudaFuncGetParamInfo(const void* func, size_t paramIndex, size_t* paramOffset, size_t* paramSize) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (profile().driver_version < kFirstDriverWithParamInfo) return fail(cudaErrorCallRequiresNewerDriver);
  const KernelInfo* k = kernelOf(func);
  const cudaError_t result = kernelParamInfo(k, paramIndex, paramOffset, paramSize, nullptr);
  if (result == cudaErrorNotSupported) {
    reportNotSimulated("cudaFuncGetParamInfo for " + k->mangled + " (registered without a module that gives its layout)");
  }
  return done(result);
}

cudaError_t cudaGetFuncBySymbol(cudaFunction_t* functionPtr, const void* symbolPtr) {
  if (functionPtr == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const KernelInfo* k = findKernel(symbolPtr);
  if (k == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  *functionPtr = reinterpret_cast<cudaFunction_t>(const_cast<KernelInfo*>(k));
  return cudaSuccess;
}

// Occupancy as an H100 SM allows: 2048 threads, 32 blocks, 228 KiB of shared memory (1 KiB of
// it reserved per block).
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* func,
                                                                   int blockSize, size_t dynamicSMemSize,
                                                                   unsigned int /*flags*/) {
  if (numBlocks == nullptr || blockSize <= 0) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (kernelOf(func) == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  if (blockSize > 1024) {
    *numBlocks = 0;
    return cudaSuccess;
  }
  const int warps = (blockSize + 31) / 32;
  int blocks = std::min(32, 64 / warps);
  if (dynamicSMemSize > 0)
    blocks = std::min<int>(blocks, static_cast<int>(233472 / (dynamicSMemSize + 1024)));
  *numBlocks = blocks;
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func, int blockSize,
                                                          size_t dynamicSMemSize) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

}  // extern "C"
