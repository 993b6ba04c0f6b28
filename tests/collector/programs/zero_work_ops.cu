// A CUDA program for the collector's tests: copies and fills of 0 bytes, which CUDA completes
// without any GPU work (so CUPTI reports no activity for them, on a GPU as on simgpu), between
// ops that do work, through each runtime entry point that takes a size, on a stream of its own
// and on the legacy default stream (NVIDIA's mergeSort sample does a 0-byte cudaMemcpy). The
// last op of each stream is one of them. It prints what it issued:
//   zero_work_counts kernels=K memcpys=M memsets=S zero_byte_memcpys=C zero_byte_memsets=F
// (memcpys and memsets include the 0-byte ones). Options: --iterations N (default 3).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "check_cuda.hpp"

__global__ void add_one(float* data, int count) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) data[i] += 1.0f;
}

namespace {

constexpr int kCount = 4096;
constexpr std::size_t kBytes = kCount * sizeof(float);
constexpr std::size_t kPitch = 1024;
constexpr std::size_t kRows = kBytes / kPitch;

struct Counts {
  long kernels = 0, memcpys = 0, memsets = 0, zero_memcpys = 0, zero_memsets = 0;
};

void launch(float* device, cudaStream_t stream, Counts& counts) {
  add_one<<<kCount / 256, 256, 0, stream>>>(device, kCount);
  CHECK(cudaGetLastError());
  ++counts.kernels;
}

}  // namespace

int main(int argc, char** argv) {
  long iterations = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = std::strtol(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "zero_work_ops: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  float* device = nullptr;
  float* host = nullptr;
  CHECK(cudaMalloc(&device, kBytes));
  CHECK(cudaMallocHost(&host, kBytes));
  std::memset(host, 0, kBytes);
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Counts counts;

  for (long iteration = 0; iteration < iterations; ++iteration) {
    launch(device, stream, counts);
    CHECK(cudaMemcpyAsync(device, host, 0, cudaMemcpyHostToDevice, stream));
    ++counts.memcpys, ++counts.zero_memcpys;
    launch(device, stream, counts);
    CHECK(cudaMemsetAsync(device, 0, 0, stream));
    ++counts.memsets, ++counts.zero_memsets;
    CHECK(cudaMemcpyAsync(host, device, kBytes, cudaMemcpyDeviceToHost, stream));
    ++counts.memcpys;
    CHECK(cudaMemcpy2DAsync(device, kPitch, host, kPitch, 0, kRows, cudaMemcpyHostToDevice, stream));
    ++counts.memcpys, ++counts.zero_memcpys;
    CHECK(cudaMemset2DAsync(device, kPitch, 0, kPitch, 0, stream));
    ++counts.memsets, ++counts.zero_memsets;
    launch(device, stream, counts);
    CHECK(cudaMemsetAsync(device, 0, kBytes, stream));
    ++counts.memsets;
    CHECK(cudaStreamSynchronize(stream));
  }
  // The legacy default stream, with the blocking entry points.
  CHECK(cudaMemcpy(device, host, 0, cudaMemcpyHostToDevice));
  ++counts.memcpys, ++counts.zero_memcpys;
  launch(device, nullptr, counts);
  CHECK(cudaMemcpy(host, device, kBytes, cudaMemcpyDeviceToHost));
  ++counts.memcpys;
  CHECK(cudaMemset(device, 0, 0));
  ++counts.memsets, ++counts.zero_memsets;
  // Each stream ends with a 0-byte op.
  CHECK(cudaMemcpyAsync(host, device, 0, cudaMemcpyDeviceToHost, stream));
  ++counts.memcpys, ++counts.zero_memcpys;
  CHECK(cudaDeviceSynchronize());

  std::printf("zero_work_counts kernels=%ld memcpys=%ld memsets=%ld zero_byte_memcpys=%ld zero_byte_memsets=%ld\n",
              counts.kernels, counts.memcpys, counts.memsets, counts.zero_memcpys, counts.zero_memsets);
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFreeHost(host));
  CHECK(cudaFree(device));
  return 0;
}
