// The cost of the collector's NCCL profiler plugin per collective: ncclAllReduce on the null
// NCCL (null_nccl.cpp, which calls its plugin as NCCL does: 7 callbacks per collective) and the
// null CUDA runtime, each call timed with CLOCK_MONOTONIC. Run by nccl_profiler_overhead.sh with
// and without the plugin; the difference is the plugin's own cost.
//   collector_nccl_profiler_bench [--calls N]
// prints one line:
//   nccl_profiler_bench calls=N median_ns=… p99_ns=… records_dropped=…
// Calls are paced in bursts of 256 (5 ms apart), under the rate the store is written at, so that
// no record is dropped (a refused record would cost less than a recorded one).
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "syncopate/collector/preload.h"

namespace {

std::int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
  long calls = 20000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--calls") {
      calls = std::atol(argv[i + 1]);
    } else {
      std::fprintf(stderr, "collector_nccl_profiler_bench: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (calls <= 0) {
    std::fprintf(stderr, "collector_nccl_profiler_bench: --calls takes a positive number\n");
    return 2;
  }
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  ncclComm_t comm = nullptr;
  if (ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) {
    std::fprintf(stderr, "collector_nccl_profiler_bench: ncclCommInitRank failed\n");
    return 1;
  }
  static float buffer[256];
  std::vector<std::int64_t> samples(static_cast<std::size_t>(calls));
  for (long i = 0; i < calls; ++i) {
    if (i % 256 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const std::int64_t start = nowNs();
    const ncclResult_t result = ncclAllReduce(buffer, buffer, 256, ncclFloat32, ncclSum, comm, stream);
    samples[static_cast<std::size_t>(i)] = nowNs() - start;
    if (result != ncclSuccess) {
      std::fprintf(stderr, "collector_nccl_profiler_bench: ncclAllReduce failed (%d)\n", static_cast<int>(result));
      return 1;
    }
  }
  cudaStreamSynchronize(stream);
  ncclCommDestroy(comm);
  std::sort(samples.begin(), samples.end());

  syncopate_preload_status_v1 status{};
  status.struct_size = sizeof status;
  using GetInterface = int (*)(uint32_t, const void**);
  if (auto get = reinterpret_cast<GetInterface>(dlsym(RTLD_DEFAULT, "syncopate_preload_get_interface"))) {
    const syncopate_preload_interface_v1* api = nullptr;
    if (get(1, reinterpret_cast<const void**>(&api)) == 0) (void)api->get_status(&status);
  }
  std::printf("nccl_profiler_bench calls=%ld median_ns=%lld p99_ns=%lld recording=%d records_dropped=%llu\n", calls,
              static_cast<long long>(samples[samples.size() / 2]),
              static_cast<long long>(samples[samples.size() * 99 / 100]), status.recording,
              static_cast<unsigned long long>(status.records_dropped));
  return 0;
}
