// A CUDA program for the collector's tests: every kind of call the collector records, issued
// a known number of times, through both kernel launch paths, with PyTorch-style NVTX step
// markers. It prints what it issued (the tests compare the store with it):
//   workload_counts kernels=K memcpys=M memsets=S event_records=E stream_waits=W stream_syncs=Y
//                   device_syncs=1 iterations=N nvtx_ranges=R nvtx_marks=K
// Options:
//   --iterations N       iterations (default 3); 0 with --forever
//   --forever            iterate until killed (SIGKILL tests)
//   --sleep-ms MS        host sleep at the end of each iteration (attach tests)
//   --fork-child         fork a child that never touches CUDA and exits
//   --exec-child PATH    fork and exec PATH (a program that does not use CUDA)
//   --kernel-us US       the busy kernel's cost parameter (its modelled duration in simgpu's test profile)
//   --graph              at the end, capture 3 ops into a CUDA graph (global mode, taking its
//                        time) and launch it twice; prints graph_captured_ops=3 graph_launches=2
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "check_cuda.hpp"

__global__ void busy_kernel(float* data, int count, int cost_us) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count && cost_us >= 0) data[i] = data[i] * 0.5f + 1.0f;
}

__global__ void add_one(float* data, int count) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) data[i] += 1.0f;
}

namespace {

struct Options {
  long iterations = 3;
  bool forever = false;
  long sleep_ms = 0;
  bool fork_child = false;
  const char* exec_child = nullptr;
  int kernel_us = 200;
  bool graph = false;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "cuda_workload: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--iterations") options.iterations = std::atol(value());
    else if (arg == "--forever") options.forever = true;
    else if (arg == "--sleep-ms") options.sleep_ms = std::atol(value());
    else if (arg == "--fork-child") options.fork_child = true;
    else if (arg == "--exec-child") options.exec_child = value();
    else if (arg == "--kernel-us") options.kernel_us = std::atoi(value());
    else if (arg == "--graph") options.graph = true;
    else {
      std::fprintf(stderr, "cuda_workload: unknown option %s\n", arg.c_str());
      std::exit(2);
    }
  }
  return options;
}

void waitFor(pid_t child) {
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "cuda_workload: child %d failed\n", static_cast<int>(child));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  constexpr int kCount = 1 << 12;
  constexpr size_t kBytes = kCount * sizeof(float);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);

  float* host = nullptr;
  float* device = nullptr;
  float* scratch = nullptr;
  CHECK(cudaMallocHost(&host, kBytes));
  CHECK(cudaMalloc(&device, kBytes));
  CHECK(cudaMalloc(&scratch, kBytes));
  for (int i = 0; i < kCount; ++i) host[i] = static_cast<float>(i);
  cudaStream_t compute = nullptr;
  cudaStream_t copy = nullptr;
  CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithPriority(&copy, cudaStreamNonBlocking, -1));
  cudaEvent_t ready = nullptr;
  CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));

  long kernels = 0, memcpys = 0, memsets = 0, records = 0, waits = 0, syncs = 0, ranges = 0, marks = 0;
  const dim3 grid(kCount / 256);
  const dim3 block(256);
  if (options.fork_child) {
    pid_t child = fork();
    if (child == 0) _exit(0);  // never touches CUDA
    waitFor(child);
  }
  if (options.exec_child != nullptr) {
    pid_t child = fork();
    if (child == 0) {
      execl(options.exec_child, options.exec_child, static_cast<char*>(nullptr));
      _exit(127);
    }
    waitFor(child);
  }

  for (long iteration = 0; options.forever || iteration < options.iterations; ++iteration) {
    const std::string step = "ProfilerStep#" + std::to_string(iteration);
    nvtxRangePushA(step.c_str());
    nvtxRangePushA("forward");
    CHECK(cudaMemcpyAsync(device, host, kBytes, cudaMemcpyHostToDevice, compute));
    ++memcpys;
    busy_kernel<<<grid, block, 0, compute>>>(device, kCount, options.kernel_us);  // __cudaLaunchKernel
    CHECK(cudaGetLastError());
    int count = kCount;
    void* args[] = {&device, &count};
    CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(&add_one), grid, block, args, 0, compute));
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.stream = compute;
    CHECK(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(&add_one), args));
    kernels += 3;
    nvtxRangePop();
    ++ranges;
    nvtxRangePushA("copy");
    CHECK(cudaEventRecord(ready, compute));
    ++records;
    CHECK(cudaStreamWaitEvent(copy, ready, 0));
    ++waits;
    CHECK(cudaMemsetAsync(scratch, 0, kBytes, copy));
    ++memsets;
    CHECK(cudaMemcpyAsync(scratch, device, kBytes, cudaMemcpyDeviceToDevice, copy));
    ++memcpys;
    nvtxMarkA("copies issued");
    ++marks;
    CHECK(cudaStreamSynchronize(copy));
    ++syncs;
    nvtxRangePop();
    ++ranges;
    CHECK(cudaMemcpy(host, scratch, kBytes, cudaMemcpyDeviceToHost));  // synchronous, legacy stream
    ++memcpys;
    nvtxRangePop();
    ++ranges;
    if (options.sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(options.sleep_ms));
    if (options.forever) std::printf("iteration %ld done\n", iteration);
  }
  if (options.graph) {
    // Global capture mode forbids "potentially unsafe" calls from every thread (the collector's
    // own thread included) while it lasts: it lasts a while here.
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CHECK(cudaStreamBeginCapture(compute, cudaStreamCaptureModeGlobal));
    busy_kernel<<<grid, block, 0, compute>>>(device, kCount, options.kernel_us);
    CHECK(cudaGetLastError());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(cudaMemcpyAsync(scratch, device, kBytes, cudaMemcpyDeviceToDevice, compute));
    int count = kCount;
    void* args[] = {&device, &count};
    CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(&add_one), grid, block, args, 0, compute));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(cudaStreamEndCapture(compute, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphLaunch(exec, compute));
    CHECK(cudaGraphLaunch(exec, compute));
    CHECK(cudaStreamSynchronize(compute));
    ++syncs;
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    std::printf("graph_captured_ops=3 graph_launches=2\n");
  }
  CHECK(cudaDeviceSynchronize());
  std::printf(
      "workload_counts kernels=%ld memcpys=%ld memsets=%ld event_records=%ld stream_waits=%ld stream_syncs=%ld "
      "device_syncs=1 iterations=%ld nvtx_ranges=%ld nvtx_marks=%ld\n",
      kernels, memcpys, memsets, records, waits, syncs, options.iterations, ranges, marks);
  CHECK(cudaFree(scratch));
  CHECK(cudaFree(device));
  CHECK(cudaFreeHost(host));
  return 0;
}
