// A CUDA program for the collector's tests, in the pattern of NVIDIA's simpleCallback sample:
// worker threads, released together with the main thread's first CUDA call (the one that starts
// the recorder), each choose their device, create a stream and allocate, launch, synchronise and
// free. It prints what it issued:
//   worker_counts threads=T set_devices=D stream_creates=S mallocs=M frees=F kernels=K
// Options: --threads N (default 8), --allocations N per thread (default 4).
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "check_cuda.hpp"

__global__ void add_one(float* data, int count) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) data[i] += 1.0f;
}

namespace {

constexpr int kCount = 1024;

std::atomic<bool> go{false};

void worker(int allocations) {
  while (!go.load(std::memory_order_acquire)) {
  }
  CHECK(cudaSetDevice(0));
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream));
  std::vector<float*> buffers(static_cast<std::size_t>(allocations), nullptr);
  for (float*& buffer : buffers) CHECK(cudaMalloc(&buffer, kCount * sizeof(float)));
  for (float* buffer : buffers) {
    add_one<<<kCount / 256, 256, 0, stream>>>(buffer, kCount);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaStreamSynchronize(stream));
  for (float* buffer : buffers) CHECK(cudaFree(buffer));
  CHECK(cudaStreamDestroy(stream));
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 8;
  int allocations = 4;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--allocations") == 0 && i + 1 < argc) {
      allocations = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "worker_threads: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(worker, allocations);
  // The workers start calling CUDA while this first call starts the recorder.
  go.store(true, std::memory_order_release);
  float* mine = nullptr;
  CHECK(cudaMalloc(&mine, kCount * sizeof(float)));
  for (std::thread& t : workers) t.join();
  CHECK(cudaFree(mine));
  std::printf("worker_counts threads=%d set_devices=%d stream_creates=%d mallocs=%d frees=%d kernels=%d\n", threads,
              threads, threads, threads * allocations + 1, threads * allocations + 1, threads * allocations);
  return 0;
}
