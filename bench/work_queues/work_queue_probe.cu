// Whether the GPU's work queues hold one stream's work behind another's
// (CUDA_DEVICE_MAX_CONNECTIONS), measured with CUDA events through the CUDA runtime alone, so that
// the same program runs on a real GPU (bench/gpu_check.sh) and on simgpu (the simgpu label's
// tests): a 10 ms kernel and a 1 ms kernel on a first stream, then an event recorded on a second
// stream that nothing orders after them. With a work queue per stream the event passes at once;
// with one queue for both (CUDA_DEVICE_MAX_CONNECTIONS=1) it waits in the queue behind the
// 1 ms kernel, which waits on its stream for the 10 ms one: it passes about 10 ms after the
// first kernel began.
//   work_queue_probe        (on simgpu: SIMGPU_PROFILE=bench/work_queues/profile.json, which
//                            costs the kernel by its argument)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace {

constexpr long long kLongNs = 10'000'000;
constexpr long long kShortNs = 1'000'000;

bool check(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "work_queue_probe: %s failed: %s\n", what, cudaGetErrorString(error));
  return false;
}

}  // namespace

// One thread that spins on the GPU's nanosecond timer for `ns`; the rest of the GPU stays free.
__global__ void spin_kernel(long long ns) {
  unsigned long long start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    unsigned long long now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (static_cast<long long>(now - start) >= ns) break;
  }
}

int main() {
  const char* connections = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  cudaStream_t first = nullptr, second = nullptr;
  cudaEvent_t began = nullptr, passed = nullptr;
  if (!check(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking), "cudaStreamCreateWithFlags") ||
      !check(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking), "cudaStreamCreateWithFlags") ||
      !check(cudaEventCreate(&began), "cudaEventCreate") || !check(cudaEventCreate(&passed), "cudaEventCreate")) {
    return 1;
  }
  // The first launch loads the module: not part of what is measured.
  spin_kernel<<<1, 1, 0, first>>>(1000);
  if (!check(cudaGetLastError(), "the warm-up launch") || !check(cudaDeviceSynchronize(), "cudaDeviceSynchronize")) return 1;

  if (!check(cudaEventRecord(began, first), "cudaEventRecord")) return 1;
  spin_kernel<<<1, 1, 0, first>>>(kLongNs);
  spin_kernel<<<1, 1, 0, first>>>(kShortNs);
  if (!check(cudaGetLastError(), "the launches") || !check(cudaEventRecord(passed, second), "cudaEventRecord") ||
      !check(cudaDeviceSynchronize(), "cudaDeviceSynchronize")) {
    return 1;
  }
  float ms = 0;
  if (!check(cudaEventElapsedTime(&ms, began, passed), "cudaEventElapsedTime")) return 1;
  const bool held = ms >= 0.5f * static_cast<float>(kLongNs) / 1e6f;
  std::printf("work_queue_probe: CUDA_DEVICE_MAX_CONNECTIONS=%s: an event on a second stream passed %.3f ms after a "
              "%lld ms kernel began on the first: %s\n",
              connections != nullptr ? connections : "unset", ms, kLongNs / 1'000'000,
              held ? "held behind the first stream's work (one work queue)" : "not held (a work queue of its own)");
  cudaEventDestroy(began);
  cudaEventDestroy(passed);
  cudaStreamDestroy(first);
  cudaStreamDestroy(second);
  return 0;
}
