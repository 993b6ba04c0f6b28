// The kernel registry: what __cudaRegisterFunction tells simgpu about each kernel (its host
// stub and mangled device name), the parameter layout derived from the mangled name, the
// kernel's cost from the profile, and the optional CPU implementation the program exports
// (`extern "C" void simgpu_cpu_<mangled name>(void** args)`).
#pragma once

#include <simgpu/core/export.hpp>
#include <simgpu/core/module_params.hpp>
#include <simgpu/core/profile.hpp>
#include <simgpu/core/stream_op.hpp>

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace simgpu {

// How a parameter's value can be read, from the kernel's name: integers feed the cost model;
// anything else only has a size (or not even that, until the module says).
enum class ParamType : unsigned char { Pointer, Signed, Unsigned, Bool, Float, Other };

struct ParamInfo {
  ParamType type = ParamType::Other;
  std::size_t size = 0;    // 0 when unknown (a class or enum passed by value)
  std::size_t offset = 0;  // in the kernel's parameter buffer; valid when the layout is known
};

using CpuKernel = void (*)(void** args);

// What the mangled device name says about a kernel.
struct KernelSignature {
  std::string name;  // the function's own name: no namespace, template arguments or signature
  // `params_known` is false for extern "C" kernels (no signature in the name) and for names
  // simgpu cannot parse; `layout_known` is false as soon as one parameter's size is unknown,
  // since later offsets then are too, unless the kernel's module gives every offset and size
  // (module_params.hpp), as it does for every kernel nvcc compiled.
  bool params_known = false;
  bool layout_known = false;
  std::vector<ParamInfo> params;
  std::size_t params_bytes = 0;
};

struct SIMGPU_API KernelInfo : KernelSignature {
  const void* host_function = nullptr;
  std::string mangled;  // the device name given to __cudaRegisterFunction
  int max_dynamic_shared_bytes = 48 * 1024;  // cudaFuncAttributeMaxDynamicSharedMemorySize

  // Resolved on first launch: the profile's cost entry and the program's CPU implementation.
  const KernelCostSpec* cost() const;
  CpuKernel cpuImplementation() const;

 private:
  void resolve() const;
  mutable std::once_flag resolved_;
  mutable const KernelCostSpec* cost_ = nullptr;
  mutable CpuKernel cpu_ = nullptr;
};

// Called by __cudaRegisterFunction (and by tests), with the layouts of the kernel's module when
// there is one. Registering a host function again replaces its entry for later lookups; entries
// are never freed, so running launches stay valid.
SIMGPU_API const KernelInfo& registerKernel(const void* host_function, const char* device_name,
                                            const ModuleParamLayouts* module = nullptr);
SIMGPU_API const KernelInfo* findKernel(const void* host_function);
// A cudaKernel_t handed out by __cudaGetKernel (or a cudaFunction_t, a CUfunction, from
// cudaGetFuncBySymbol) is a KernelInfo*; nullptr if `handle` is none of simgpu's.
SIMGPU_API const KernelInfo* kernelFromHandle(const void* handle);
SIMGPU_API void setMaxDynamicSharedBytes(const KernelInfo& kernel, int bytes);

// Parses a mangled name (for tests and tools).
SIMGPU_API KernelSignature describeKernel(const char* device_name);

// Modelled duration of one launch from the profile (without launch latency). Profile entries
// that name a parameter which is not an integer are reported once and the default is used.
SIMGPU_API TimeNs kernelDuration(const KernelInfo& kernel, void* const* args);

// cudaErrorInvalidConfiguration / cudaErrorInvalidValue for a launch CUDA would refuse.
SIMGPU_API cudaError_t validateLaunch(const KernelInfo& kernel, dim3 grid, dim3 block, std::size_t shared_bytes);

// Validates the configuration, copies the arguments and enqueues the launch on `stream`.
SIMGPU_API cudaError_t launchKernel(const KernelInfo& kernel, dim3 grid, dim3 block, void** args,
                                    std::size_t shared_bytes, cudaStream_t stream);

// A parameter's offset and size as cudaFuncGetParamInfo reports them, and whether the kernel's
// name says it is a pointer (simgpu's own knowledge, for its tests; `is_pointer` may be null).
// Errors: cudaErrorInvalidDeviceFunction for an unknown function, cudaErrorNotSupported when
// neither the module nor the name gives the layout (a kernel registered without its module),
// cudaErrorInvalidValue past the last parameter or for a null `offset`.
SIMGPU_API cudaError_t kernelParamInfo(const KernelInfo* kernel, std::size_t index, std::size_t* offset,
                                       std::size_t* size, int* is_pointer);

}  // namespace simgpu
