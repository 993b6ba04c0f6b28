// An ordinary CUDA program, compiled by nvcc against the toolkit's shared runtime and run
// unchanged on simgpu by a test: kernels launched with <<<...>>> (CUDA 13's __cudaGetKernel +
// __cudaLaunchKernel path), with cudaLaunchKernel and with cudaLaunchKernelExC, a __device__
// variable set with cudaMemcpyToSymbol, streams, events, and a captured graph. Each kernel also ships the CPU
// implementation simgpu runs, exported by name. Exits 0 only if every result is right.
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

__device__ float bias;

__global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

template <typename T>
__global__ void scale(T* data, T factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

__global__ void add_bias(float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += bias;
}

// CPU implementations, named simgpu_cpu_<mangled device name>; args[i] points at parameter i.
extern "C" void simgpu_cpu__Z5saxpyfPKfPfi(void** args) {
  const float a = *static_cast<float*>(args[0]);
  const float* x = *static_cast<const float**>(args[1]);
  float* y = *static_cast<float**>(args[2]);
  const int n = *static_cast<int*>(args[3]);
  for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

extern "C" void simgpu_cpu__Z5scaleIfEvPT_S0_i(void** args) {
  float* data = *static_cast<float**>(args[0]);
  const float factor = *static_cast<float*>(args[1]);
  const int n = *static_cast<int*>(args[2]);
  for (int i = 0; i < n; ++i) data[i] *= factor;
}

// The device address of `bias` (cudaGetSymbolAddress), read as the device would read it.
static float* bias_address = nullptr;

extern "C" void simgpu_cpu__Z8add_biasPfi(void** args) {
  float* y = *static_cast<float**>(args[0]);
  const int n = *static_cast<int*>(args[1]);
  for (int i = 0; i < n; ++i) y[i] += *bias_address;
}

namespace {

int failures = 0;

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "FAIL %s: %s (%s)\n", what, cudaGetErrorName(err), cudaGetErrorString(err));
    ++failures;
  }
}

void expectAll(const std::vector<float>& v, float expected, const char* what) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] != expected) {
      std::fprintf(stderr, "FAIL %s: element %zu is %g, expected %g\n", what, i, v[i], expected);
      ++failures;
      return;
    }
  std::printf("ok %s\n", what);
}

}  // namespace

int main(int argc, char** argv) {
  constexpr int n = 1 << 16;
  // With --exit-with-pending-work the program queues work and returns without waiting for
  // it, as programs do: the runtime must still exit promptly and cleanly.
  if (argc > 1 && std::string(argv[1]) == "--exit-with-pending-work") {
    float* data = nullptr;
    check(cudaMalloc(&data, n * sizeof(float)), "cudaMalloc");
    for (int i = 0; i < 2000; ++i) saxpy<<<(n + 255) / 256, 256>>>(1.0f, data, data, n);
    check(cudaGetLastError(), "queued launches");
    std::printf("queued work, exiting\n");
    return failures == 0 ? 0 : 1;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device: %s, %d SMs, compute capability %d.%d\n", prop.name, prop.multiProcessorCount,
              prop.major, prop.minor);

  std::vector<float> host(n);
  float* x = nullptr;
  float* y = nullptr;
  check(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc x");
  check(cudaMalloc(&y, n * sizeof(float)), "cudaMalloc y");
  std::vector<float> ones(n, 1.0f), twos(n, 2.0f);
  check(cudaMemcpy(x, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice), "copy x");
  check(cudaMemcpy(y, twos.data(), n * sizeof(float), cudaMemcpyHostToDevice), "copy y");

  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate start");
  check(cudaEventCreate(&stop), "cudaEventCreate stop");

  // 1. <<<...>>>: y = 3 * 1 + 2 = 5
  check(cudaEventRecord(start, stream), "cudaEventRecord start");
  saxpy<<<(n + 255) / 256, 256, 0, stream>>>(3.0f, x, y, n);
  check(cudaGetLastError(), "saxpy<<<>>>");
  check(cudaEventRecord(stop, stream), "cudaEventRecord stop");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  std::printf("saxpy took %.3f ms (model time)\n", ms);
  check(cudaMemcpy(host.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost), "copy back 1");
  expectAll(host, 5.0f, "saxpy via <<<>>>");

  // 2. cudaLaunchKernel on a template kernel: y = 5 * 2 = 10
  float factor = 2.0f;
  int count = n;
  void* scale_args[] = {&y, &factor, &count};
  check(cudaLaunchKernel(reinterpret_cast<const void*>(&scale<float>), dim3((n + 255) / 256), dim3(256),
                         scale_args, 0, nullptr),
        "cudaLaunchKernel scale<float>");
  check(cudaMemcpy(host.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost), "copy back 2");
  expectAll(host, 10.0f, "scale<float> via cudaLaunchKernel");

  // 3. cudaLaunchKernelExC with a __device__ variable: y = 10 + 0.5 = 10.5
  const float b = 0.5f;
  check(cudaMemcpyToSymbol(bias, &b, sizeof(b)), "cudaMemcpyToSymbol");
  check(cudaGetSymbolAddress(reinterpret_cast<void**>(&bias_address), bias), "cudaGetSymbolAddress");
  cudaLaunchConfig_t config{};
  config.gridDim = dim3((n + 255) / 256);
  config.blockDim = dim3(256);
  config.stream = stream;
  float* y_arg = y;
  void* bias_args[] = {&y_arg, &count};
  check(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(&add_bias), bias_args), "cudaLaunchKernelExC");
  check(cudaMemcpyAsync(host.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost, stream), "async copy back");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize 2");
  expectAll(host, 10.5f, "add_bias via cudaLaunchKernelExC");

  // 4. A captured <<<...>>> launch replayed twice by a graph: y = 10.5 * 2 * 2 = 42
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  scale<float><<<(n + 255) / 256, 256, 0, stream>>>(y, 2.0f, n);
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch 1");
  check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch 2");
  check(cudaMemcpyAsync(host.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost, stream), "async copy back 2");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize 3");
  expectAll(host, 42.0f, "scale<float> captured in a graph, launched twice");
  check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  check(cudaGraphDestroy(graph), "cudaGraphDestroy");

  // 5. A launch error is reported by cudaGetLastError and cleared by it.
  saxpy<<<1, 2048>>>(1.0f, x, y, n);
  const cudaError_t launch_error = cudaGetLastError();
  if (launch_error != cudaErrorInvalidConfiguration) {
    std::fprintf(stderr, "FAIL oversized block gave %s\n", cudaGetErrorName(launch_error));
    ++failures;
  }
  check(cudaGetLastError(), "last error cleared");

  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  check(cudaFree(x), "cudaFree x");
  check(cudaFree(y), "cudaFree y");
  std::printf("%s\n", failures == 0 ? "all checks passed" : "some checks failed");
  return failures == 0 ? 0 : 1;
}
