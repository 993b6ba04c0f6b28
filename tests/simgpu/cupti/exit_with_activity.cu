// A CUDA program that records kernel activity through CUPTI, as the collector does, and exits
// while kernels are still completing: what a rank that stops on an error does (the plan soak,
// docs/reliability.md, found one crashing there). Its first exit handler, registered before any
// CUDA call, is what a recorder closing its store at exit is: slow (300 ms), and it allocates.
// It runs after the static objects that libcupti made for the first kernel's record are
// destroyed (what they freed is what its allocations get back: it fills them), and before
// simgpu stops its workers, which meanwhile complete `late_kernel` (20 ms each in
// slow_kernel.json) and write its records. Exits 0 and prints "queued work, exiting" unless
// something crashes.
#include <cuda_runtime.h>
#include <cupti_activity.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

__global__ void first_kernel(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = 1.0f;
}

__global__ void late_kernel(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

// CPU implementations, named simgpu_cpu_<mangled device name>; args[i] points at parameter i.
extern "C" void simgpu_cpu__Z12first_kernelPfi(void** args) {
  float* data = *static_cast<float**>(args[0]);
  const int n = *static_cast<int*>(args[1]);
  for (int i = 0; i < n; ++i) data[i] = 1.0f;
}

extern "C" void simgpu_cpu__Z11late_kernelPfi(void** args) {
  float* data = *static_cast<float**>(args[0]);
  const int n = *static_cast<int*>(args[1]);
  for (int i = 0; i < n; ++i) data[i] += 1.0f;
}

namespace {

void CUPTIAPI bufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *size = 1 << 16;
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t) {
  std::free(buffer);
}

void slowExitHandler() {
  std::vector<void*> blocks;
  for (std::size_t size = 16; size <= 256; size += 16) {
    for (int i = 0; i < 16; ++i) {
      blocks.push_back(std::malloc(size));
      std::memset(blocks.back(), 0xff, size);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (void* block : blocks) std::free(block);
}

bool ok(bool good, const char* what) {
  if (!good) std::fprintf(stderr, "exit_with_activity: %s failed\n", what);
  return good;
}

}  // namespace

int main() {
  std::atexit(slowExitHandler);
  if (!ok(cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted) == CUPTI_SUCCESS, "registering buffers") ||
      !ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS, "enabling kernel activity")) {
    return 1;
  }
  constexpr int n = 256;
  float* data = nullptr;
  if (!ok(cudaMalloc(&data, n * sizeof(float)) == cudaSuccess, "cudaMalloc")) return 1;
  first_kernel<<<1, n>>>(data, n);
  if (!ok(cudaDeviceSynchronize() == cudaSuccess, "the first kernel")) return 1;
  for (int i = 0; i < 10; ++i) late_kernel<<<1, n>>>(data, n);
  if (!ok(cudaGetLastError() == cudaSuccess, "queueing the late kernels")) return 1;
  std::printf("queued work, exiting\n");
  return 0;
}
