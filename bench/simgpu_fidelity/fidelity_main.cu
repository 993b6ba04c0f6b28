// simgpu fidelity: for kernels and copies of modelled durations from 1 us to 50 ms, the
// wall-clock time the host sees (from the call to the return of cudaStreamSynchronize)
// against what the profile models (launch latency plus the op's duration). Each op is also
// run ten at a time, queued back to back, to show the per-op cost once host wake-ups are
// amortised. Run on simgpu:
//   scripts/run-on-simgpu.sh build/bin/simgpu_fidelity
// SIMGPU_PROFILE defaults to bench/simgpu_fidelity/profile.json: the default device, the
// benchmark's kernel costed by a byte count, and copies at 1 GB/s. simgpu really copies the
// bytes, so a copy can only take its modelled time if the host copies memory at least as fast
// as the profile's bandwidth; the program prints the host's own speed for comparison, and the
// count of ops whose real work overran their modelled time.
#include "fidelity_table.hpp"

#include <simgpu/core/copies.hpp>
#include <simgpu/core/kernels.hpp>
#include <simgpu/core/runtime.hpp>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

// Costed by the profile from its byte count; it has no CPU implementation, so it only takes
// time, which isolates simgpu's timing from the host's speed at doing real work.
__global__ void timed_kernel(unsigned long long bytes) { (void)bytes; }

namespace {

using simgpu::bench::Series;

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "simgpu_fidelity: %s failed: %s\n", what, cudaGetErrorString(err));
    std::exit(1);
  }
}

int repetitions(double modelled_ns) {
  if (modelled_ns < 1e6) return 60;
  if (modelled_ns <= 10e6) return 20;
  return 8;
}

double wallNs(const std::function<void()>& run) {
  const simgpu::TimeNs t0 = simgpu::nowNs();
  run();
  return static_cast<double>(simgpu::nowNs() - t0);
}

// One series of single ops and one of ten queued ops.
void measure(std::vector<Series>& out, const std::string& op, double op_ns, cudaStream_t stream,
             const std::function<void()>& launch) {
  const double latency = static_cast<double>(simgpu::profile().device.launch_latency_ns);
  Series single{op, "single", latency + op_ns, {}};
  Series queued{op, "x10", (latency + 10 * op_ns) / 10, {}};
  const int reps = repetitions(op_ns);
  for (int i = 0; i < reps; ++i) {
    single.measured_ns.push_back(wallNs([&] {
      launch();
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    }));
  }
  for (int i = 0; i < std::max(3, reps / 4); ++i) {
    queued.measured_ns.push_back(wallNs([&] {
      for (int k = 0; k < 10; ++k) launch();
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    }) / 10);
  }
  out.push_back(single);
  out.push_back(queued);
}

// What the host's memcpy achieves on a 64 MiB buffer (best of five).
double hostCopyBandwidth() {
  constexpr std::size_t bytes = 64u << 20;
  std::vector<char> a(bytes, 1), b(bytes, 2);
  double best = 0;
  for (int i = 0; i < 5; ++i) {
    const double ns = wallNs([&] { std::memcpy(b.data(), a.data(), bytes); });
    best = std::max(best, bytes / ns * 1e9);
  }
  return best;
}

}  // namespace

int main() {
  if (std::getenv("SIMGPU_PROFILE") == nullptr) setenv("SIMGPU_PROFILE", SIMGPU_FIDELITY_PROFILE, 1);
  check(cudaFree(nullptr), "initialisation");
  const simgpu::Profile& p = simgpu::profile();
  std::printf("profile: %s (%s)\n", p.name.c_str(), p.source.c_str());
  std::printf("host memcpy speed: %.1f GB/s (profile: HtoD %.1f GB/s, DtoH %.1f GB/s)\n\n",
              hostCopyBandwidth() / 1e9, p.copy.h2d_bandwidth / 1e9, p.copy.d2h_bandwidth / 1e9);

  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  const std::vector<double> durations_ns = {1e3, 1e4, 1e5, 1e6, 5e6, 10e6, 50e6};
  std::vector<Series> all;

  const simgpu::KernelInfo* kernel = simgpu::findKernel(reinterpret_cast<const void*>(&timed_kernel));
  if (kernel == nullptr) {
    std::fprintf(stderr, "simgpu_fidelity: the kernel is not registered (is simgpu's libcudart.so.13 first?)\n");
    return 1;
  }
  for (double d : durations_ns) {
    unsigned long long bytes = static_cast<unsigned long long>(d * 1e-9 * p.device.memory_bandwidth);
    void* args[] = {&bytes};
    const double modelled = static_cast<double>(simgpu::kernelDuration(*kernel, args));
    measure(all, "kernel", modelled, stream, [&] { timed_kernel<<<1, 1, 0, stream>>>(bytes); });
  }

  // Copies move real bytes: the host must copy as fast as the profile's bandwidth, so the
  // largest buffer is the one of the longest copy that is measured.
  const double max_copy_ns = 10e6;
  const auto max_bytes = static_cast<std::size_t>(max_copy_ns * 1e-9 * std::max(p.copy.h2d_bandwidth, p.copy.d2h_bandwidth));
  void* device = nullptr;
  void* pinned = nullptr;
  check(cudaMalloc(&device, max_bytes), "cudaMalloc");
  check(cudaMallocHost(&pinned, max_bytes), "cudaMallocHost");
  std::memset(pinned, 1, max_bytes);  // no first-touch page faults inside the measured copies
  check(cudaMemcpy(device, pinned, max_bytes, cudaMemcpyHostToDevice), "warm-up copy");
  struct CopyCase {
    const char* name;
    simgpu::CopyDirection direction;
    double bandwidth;
    cudaMemcpyKind kind;
  };
  const CopyCase copies[] = {
      {"memcpy HtoD (pinned)", simgpu::CopyDirection::HostToDevice, p.copy.h2d_bandwidth, cudaMemcpyHostToDevice},
      {"memcpy DtoH (pinned)", simgpu::CopyDirection::DeviceToHost, p.copy.d2h_bandwidth, cudaMemcpyDeviceToHost},
  };
  for (const CopyCase& c : copies) {
    for (double d : durations_ns) {
      if (d > max_copy_ns || d <= static_cast<double>(p.copy.latency_ns)) continue;
      const auto bytes = static_cast<std::size_t>((d - static_cast<double>(p.copy.latency_ns)) * 1e-9 * c.bandwidth);
      const double modelled = static_cast<double>(simgpu::copyDuration(c.direction, bytes));
      void* dst = c.kind == cudaMemcpyHostToDevice ? device : pinned;
      void* src = c.kind == cudaMemcpyHostToDevice ? pinned : device;
      measure(all, c.name, modelled, stream, [&] { check(cudaMemcpyAsync(dst, src, bytes, c.kind, stream), "copy"); });
    }
  }

  simgpu::bench::printTable(all);
  simgpu::bench::printSummary(all, 1e6);
  const simgpu::Stats stats = simgpu::stats();
  std::printf("ops whose real work took longer than modelled: %llu of %llu\n",
              static_cast<unsigned long long>(stats.ops_overran),
              static_cast<unsigned long long>(stats.ops_completed));
  check(cudaFree(device), "cudaFree");
  check(cudaFreeHost(pinned), "cudaFreeHost");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}
