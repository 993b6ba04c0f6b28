// A stand-in for the NVIDIA driver (libcuda.so.1), for the tests that need a driver on a machine
// without one (simgpu has no driver API): it answers the entry points the test programs use,
// hands out its own functions through cuGetProcAddress as the real driver does, and counts the
// launches and copies that reach it. A function that is one of simgpu's kernels (a CUfunction
// from cudaGetFuncBySymbol) runs on simgpu's stream, with its layout from simgpu's module, so
// that the runtime's ordering of driver launches can be checked by their results; any other
// function is a placeholder that only counts. Its one library kernel (cuLibraryGetKernel) is a
// CUkernel, which cuLaunchKernel takes in place of a CUfunction and which, as the driver
// documents, is named and queried through cuKernelGetName/cuKernelGetParamInfo: the CUfunction
// queries refuse it here.
#include <cuda.h>

#include <simgpu/core/kernels.hpp>

#include <atomic>
#include <cstring>
#include <vector>

namespace {
std::atomic<int> launches{0};
std::atomic<int> copies{0};

// The library kernel's handle, and its one parameter: a pointer.
const CUkernel kLibraryKernel = reinterpret_cast<CUkernel>(0x5678);
bool isLibraryKernel(CUfunction f) { return reinterpret_cast<CUkernel>(f) == kLibraryKernel; }

const simgpu::KernelInfo* simgpuKernel(CUfunction f) {
  return isLibraryKernel(f) ? nullptr : simgpu::kernelFromHandle(f);
}

CUresult driverResult(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return CUDA_SUCCESS;
    case cudaErrorInvalidValue: return CUDA_ERROR_INVALID_VALUE;
    case cudaErrorInvalidResourceHandle: return CUDA_ERROR_INVALID_HANDLE;
    default: return CUDA_ERROR_LAUNCH_FAILED;
  }
}

// The argument array a packed buffer stands for (CU_LAUNCH_PARAM_BUFFER_POINTER), by the
// kernel's offsets.
bool unpack(const simgpu::KernelInfo& k, void** extra, std::vector<void*>& args) {
  unsigned char* buffer = nullptr;
  for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = static_cast<unsigned char*>(extra[i + 1]);
  }
  if (buffer == nullptr || !k.layout_known) return false;
  for (const simgpu::ParamInfo& p : k.params) args.push_back(buffer + p.offset);
  return true;
}

CUresult launch(CUfunction f, dim3 grid, dim3 block, unsigned shared, CUstream stream, void** params, void** extra) {
  launches.fetch_add(1);
  const simgpu::KernelInfo* k = simgpuKernel(f);
  if (k == nullptr) return CUDA_SUCCESS;  // a placeholder function
  std::vector<void*> unpacked;
  if (params == nullptr && extra != nullptr) {
    if (!unpack(*k, extra, unpacked)) return CUDA_ERROR_INVALID_VALUE;
    params = unpacked.data();
  }
  return driverResult(simgpu::launchKernel(*k, grid, block, params, shared, reinterpret_cast<cudaStream_t>(stream)));
}

}  // namespace

extern "C" {

CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream stream, void** params, void** extra) {
  return launch(f, dim3(gx, gy, gz), dim3(bx, by, bz), shared, stream, params, extra);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return launch(f, dim3(config->gridDimX, config->gridDimY, config->gridDimZ),
                dim3(config->blockDimX, config->blockDimY, config->blockDimZ), config->sharedMemBytes,
                config->hStream, params, extra);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr, const void*, size_t, CUstream) {
  copies.fetch_add(1);
  return CUDA_SUCCESS;
}

CUresult cuFuncGetName(const char** name, CUfunction f) {
  if (isLibraryKernel(f)) return CUDA_ERROR_INVALID_HANDLE;
  const simgpu::KernelInfo* k = simgpuKernel(f);
  *name = k != nullptr ? k->mangled.c_str() : "fake_driver_kernel";
  return CUDA_SUCCESS;
}

// The placeholder function has no parameters.
CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t* offset, size_t* size) {
  if (isLibraryKernel(f)) return CUDA_ERROR_INVALID_HANDLE;
  const simgpu::KernelInfo* k = simgpuKernel(f);
  if (k == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const cudaError_t answer = simgpu::kernelParamInfo(k, index, offset, size, nullptr);
  return answer == cudaErrorNotSupported ? CUDA_ERROR_NOT_SUPPORTED : driverResult(answer);
}

CUresult cuLibraryGetKernel(CUkernel* kernel, CUlibrary, const char* name) {
  if (kernel == nullptr || name == nullptr || std::strcmp(name, "fake_library_kernel") != 0) return CUDA_ERROR_NOT_FOUND;
  *kernel = kLibraryKernel;
  return CUDA_SUCCESS;
}

CUresult cuKernelGetName(const char** name, CUkernel kernel) {
  if (kernel != kLibraryKernel) return CUDA_ERROR_INVALID_HANDLE;
  *name = "fake_library_kernel";
  return CUDA_SUCCESS;
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t index, size_t* offset, size_t* size) {
  if (kernel != kLibraryKernel) return CUDA_ERROR_INVALID_HANDLE;
  if (index > 0) return CUDA_ERROR_INVALID_VALUE;
  *offset = 0;
  if (size != nullptr) *size = sizeof(void*);
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice* device) {
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int, cuuint64_t, CUdriverProcAddressQueryResult* status) {
  void* found = nullptr;
  if (std::strcmp(symbol, "cuLaunchKernel") == 0) found = reinterpret_cast<void*>(&cuLaunchKernel);
  if (std::strcmp(symbol, "cuLaunchKernelEx") == 0) found = reinterpret_cast<void*>(&cuLaunchKernelEx);
  if (std::strcmp(symbol, "cuMemcpyHtoDAsync") == 0) found = reinterpret_cast<void*>(&cuMemcpyHtoDAsync_v2);
  if (status != nullptr) *status = found != nullptr ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  *pfn = found;
  return found != nullptr ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

// For the test programs: how many calls reached the "driver".
int fakeDriverLaunches() { return launches.load(); }
int fakeDriverCopies() { return copies.load(); }

}  // extern "C"
