// A program that reaches the driver the way cuBLAS and NCCL do: through entry points handed
// out by cuGetProcAddress, by name, and looked up in libcuda.so.1 by handle (as a library with
// its own copy of the CUDA runtime, cuBLAS's, does). Prints
//   driver_client handed_out=<0|1> by_handle=<0|1> launches=<n> copies=<n> reached_launches=<n>
//                 reached_copies=<n>
// where handed_out and by_handle say whether the entry points it was given, by cuGetProcAddress
// and by handle, are the preloaded interposer (the symbol the process-wide lookup finds), and
// reached_* what the driver itself saw.
//   driver_client library
// launches a library's kernel (a CUkernel from cuLibraryGetKernel, as cuBLAS does) twice, with a
// pointer argument, and prints
//   driver_client library_launches=2 argument=<the pointer, hex> reached_launches=<n>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

extern "C" int fakeDriverLaunches();
extern "C" int fakeDriverCopies();

namespace {

int launchLibraryKernel() {
  CUkernel kernel = nullptr;
  if (cuLibraryGetKernel(&kernel, nullptr, "fake_library_kernel") != CUDA_SUCCESS) return 1;
  void* argument = nullptr;  // device memory, which the parameter's word is found in
  if (cudaMalloc(&argument, 256) != cudaSuccess) return 1;
  void* params[] = {&argument};
  for (int i = 0; i < 2; ++i) {
    if (cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), 2, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr) !=
        CUDA_SUCCESS) {
      return 1;
    }
  }
  cudaDeviceSynchronize();
  std::printf("driver_client library_launches=2 argument=%p reached_launches=%d\n", argument, fakeDriverLaunches());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The runtime is used too (as by any real program), which also gives the collector its device.
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || cuInit(0) != CUDA_SUCCESS) return 1;
  if (argc > 1 && std::strcmp(argv[1], "library") == 0) return launchLibraryKernel();
  void* entry = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (cuGetProcAddress_v2("cuLaunchKernel", &entry, 12080, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS) return 1;
  const bool handed_out = entry == dlsym(RTLD_DEFAULT, "cuLaunchKernel");
  auto launch = reinterpret_cast<decltype(&cuLaunchKernel)>(entry);
  auto function = reinterpret_cast<CUfunction>(0x1234);
  int launches = 0;
  for (int i = 0; i < 3; ++i, ++launches) {
    if (launch(function, 2, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr) != CUDA_SUCCESS) return 1;
  }
  for (int i = 0; i < 2; ++i, ++launches) {
    if (cuLaunchKernel(function, 2, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr) != CUDA_SUCCESS) return 1;
  }
  // libcuda.so.1 by handle: its cuGetProcAddress_v2, and its cuLaunchKernel directly.
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == nullptr) return 1;
  auto get_by_handle = reinterpret_cast<decltype(&cuGetProcAddress_v2)>(dlsym(cuda, "cuGetProcAddress_v2"));
  void* handle_entry = nullptr;
  if (get_by_handle == nullptr ||
      get_by_handle("cuLaunchKernel", &handle_entry, 12080, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS) {
    return 1;
  }
  auto launch_by_handle = reinterpret_cast<decltype(&cuLaunchKernel)>(dlsym(cuda, "cuLaunchKernel"));
  const bool by_handle = handle_entry == dlsym(RTLD_DEFAULT, "cuLaunchKernel") &&
                         reinterpret_cast<void*>(launch_by_handle) == dlsym(RTLD_DEFAULT, "cuLaunchKernel");
  for (int i = 0; i < 2; ++i, ++launches) {
    if (reinterpret_cast<decltype(&cuLaunchKernel)>(handle_entry)(function, 2, 1, 1, 64, 1, 1, 0, nullptr, nullptr,
                                                                  nullptr) != CUDA_SUCCESS) {
      return 1;
    }
  }
  if (launch_by_handle(function, 2, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr) != CUDA_SUCCESS) return 1;
  ++launches;
  void* copy_entry = nullptr;
  if (cuGetProcAddress_v2("cuMemcpyHtoDAsync", &copy_entry, 12080, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS) {
    return 1;
  }
  static char host[256];
  auto copy = reinterpret_cast<decltype(&cuMemcpyHtoDAsync_v2)>(copy_entry);
  if (copy(0x1000, host, sizeof host, nullptr) != CUDA_SUCCESS) return 1;
  cudaDeviceSynchronize();
  std::printf("driver_client handed_out=%d by_handle=%d launches=%d copies=1 reached_launches=%d reached_copies=%d\n",
              handed_out ? 1 : 0, by_handle ? 1 : 0, launches, fakeDriverLaunches(), fakeDriverCopies());
  return 0;
}
