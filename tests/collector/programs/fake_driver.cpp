// A stand-in for the NVIDIA driver (libcuda.so.1), for the one test that needs a driver on a
// machine without one: it answers the few entry points the test program uses, hands out its own
// functions through cuGetProcAddress as the real driver does, and counts the calls that reach
// it. A test fixture only; simgpu has no driver API.
#include <cuda.h>

#include <atomic>
#include <cstring>

namespace {
std::atomic<int> launches{0};
std::atomic<int> copies{0};
}  // namespace

extern "C" {

CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }

CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                        void**, void**) {
  launches.fetch_add(1);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr, const void*, size_t, CUstream) {
  copies.fetch_add(1);
  return CUDA_SUCCESS;
}

CUresult cuFuncGetName(const char** name, CUfunction) {
  *name = "fake_driver_kernel";
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice* device) {
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int, cuuint64_t, CUdriverProcAddressQueryResult* status) {
  void* found = nullptr;
  if (std::strcmp(symbol, "cuLaunchKernel") == 0) found = reinterpret_cast<void*>(&cuLaunchKernel);
  if (std::strcmp(symbol, "cuMemcpyHtoDAsync") == 0) found = reinterpret_cast<void*>(&cuMemcpyHtoDAsync_v2);
  if (status != nullptr) *status = found != nullptr ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  *pfn = found;
  return found != nullptr ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

// For the test program: how many calls reached the "driver".
int fakeDriverLaunches() { return launches.load(); }
int fakeDriverCopies() { return copies.load(); }

}  // extern "C"
