// grad_sync: a small data-parallel gradient synchronisation loop for the runtime's tests.
//
// Each rank, per iteration, on its compute stream: zero the gradients (after the previous
// iteration's check copy), one kernel per layer (last first) writing that layer's gradient,
// then an in-place all-reduce (sum) per layer (first layer first) — the naive schedule — then
// one update kernel per layer reading the reduced gradient, and a copy of all gradients to the
// host on a check stream. The host checks every iteration's reduced gradients bit for bit
// against the sum over ranks in rank order, and the updated values at the end, and prints
// `grad_checksum iter=N value=HEX` (rank 0), as dp_trainer does. Exit 1 on any mismatch.
//
// Options that make the plan unsafe to apply somewhere, for the fail-safe tests:
//   --capture           the updates are captured into a CUDA graph and launched
//   --extern-c          a kernel without C++ linkage (unknown parameter layout) reads the
//                       gradients between the all-reduces and the updates
//   --diverge-rank R    from iteration 2, rank R makes an extra host sync between all-reduces
//   --stall-rank R      rank R stops at iteration --stall-iteration (default 2), after its
//                       backward, for --stall-seconds (default 30), then exits with 9: a rank
//                       that hangs, for the watchdog tests
//   --stall-resumes     with --stall-rank: after its stall the rank goes on instead of exiting
//                       (a slow rank, for bench/reliability/plan_soak.sh)
//   --exit-after-issue-rank R  rank R exits with 9 at the end of iteration --stall-iteration, its
//                       work issued but not yet run: a rank that dies with its all-reduces in
//                       flight
//   --scattered         each layer's gradient in its own allocation (not contiguous)
//   --thread-from K     from iteration K, a second thread launches the updates (this thread
//                       waits for it): the updates follow the all-reduces only through the
//                       program's own thread synchronisation
//   --sync-thread-rank R  from iteration 2, a second thread synchronises the compute stream
//                       (this thread waits for it): on rank R between the all-reduces, on the
//                       others after them — threads interleaved differently on one rank
//   --switch-device K   at iteration K, between the all-reduces and the updates, the rank
//                       fills a scratch buffer on another device (needs 2 devices per process)
//   --graph             the updates are a graph built node by node before the loop (one kernel
//                       node per layer) and launched every iteration
//   --stream-ordered    each iteration produces its gradients into a buffer taken with
//                       cudaMallocAsync (after a header of 256 bytes, as allocators that keep
//                       metadata lay them out), all-reduces them out of place into the gradient
//                       buffers and gives the buffer back with cudaFreeAsync right after the
//                       all-reduces; a scratch buffer of the same size, taken next on the same
//                       stream, is that memory again (the default pool keeps what it reserved),
//                       and a kernel given its start (the header, in no gradient) fills all of
//                       it: only the free's place in the stream orders it after the all-reduces
//                       that read that memory
// One that ends a communicator in the middle of the run:
//   --end-comm-at K     the all-reduces of the iterations before K go through a communicator
//                       split from the program's own, which the program ends at the start of
//                       iteration K (--end-comm-by destroy, the default; finalize:
//                       ncclCommFinalize then ncclCommDestroy; abort: ncclCommAbort) once every
//                       rank has synchronised its stream (an MPI barrier: a rank's abort fails
//                       the communicator for the ranks still using it); from K on they go through
//                       its own communicator, and the host synchronises as in every iteration
// And one that changes only how kernels are launched:
//   --all-launch-paths  the produce and update kernels go through every launch path in turn
//                       (launch_paths.hpp), each once per iteration; needs a driver (libcuda.so.1)
#include <mpi.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

#include "grad_sync_kernels.hpp"
#include "grad_sync_math.hpp"

namespace {

#define CHECK_CUDA(call)                                                                              \
  do {                                                                                                \
    const cudaError_t e_ = (call);                                                                    \
    if (e_ != cudaSuccess) {                                                                          \
      std::fprintf(stderr, "grad_sync: %s failed: %s\n", #call, cudaGetErrorString(e_));              \
      std::exit(2);                                                                                   \
    }                                                                                                 \
  } while (0)
#define CHECK_NCCL(call)                                                                              \
  do {                                                                                                \
    const ncclResult_t r_ = (call);                                                                   \
    if (r_ != ncclSuccess) {                                                                          \
      std::fprintf(stderr, "grad_sync: %s failed: %s\n", #call, ncclGetErrorString(r_));              \
      std::exit(2);                                                                                   \
    }                                                                                                 \
  } while (0)

struct Options {
  int layers = 4;
  int count = 1 << 14;  // floats per layer
  int iterations = 6;
  int produce_cost = 1, update_cost = 1;
  bool scattered = false, capture = false, extern_c = false, graph = false, stream_ordered = false;
  int diverge_rank = -1, stall_rank = -1, stall_iteration = 2, stall_seconds = 30, exit_after_issue_rank = -1;
  int thread_from = -1, switch_device = -1, sync_thread_rank = -1, end_comm_at = -1;
  std::string end_comm_by = "destroy";
  bool all_launch_paths = false, stall_resumes = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> int {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "grad_sync: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    auto text = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "grad_sync: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--layers") o.layers = value();
    else if (a == "--count") o.count = value();
    else if (a == "--iterations") o.iterations = value();
    else if (a == "--produce-cost") o.produce_cost = value();
    else if (a == "--update-cost") o.update_cost = value();
    else if (a == "--scattered") o.scattered = true;
    else if (a == "--capture") o.capture = true;
    else if (a == "--extern-c") o.extern_c = true;
    else if (a == "--diverge-rank") o.diverge_rank = value();
    else if (a == "--stall-rank") o.stall_rank = value();
    else if (a == "--stall-iteration") o.stall_iteration = value();
    else if (a == "--stall-seconds") o.stall_seconds = value();
    else if (a == "--stall-resumes") o.stall_resumes = true;
    else if (a == "--exit-after-issue-rank") o.exit_after_issue_rank = value();
    else if (a == "--thread-from") o.thread_from = value();
    else if (a == "--sync-thread-rank") o.sync_thread_rank = value();
    else if (a == "--switch-device") o.switch_device = value();
    else if (a == "--graph") o.graph = true;
    else if (a == "--stream-ordered") o.stream_ordered = true;
    else if (a == "--all-launch-paths") o.all_launch_paths = true;
    else if (a == "--end-comm-at") o.end_comm_at = value();
    else if (a == "--end-comm-by") o.end_comm_by = text();
    else {
      std::fprintf(stderr, "grad_sync: unknown option %s\n", a.c_str());
      std::exit(2);
    }
  }
  if (o.all_launch_paths && 2 * o.layers != kLaunchPaths) {
    std::fprintf(stderr, "grad_sync: --all-launch-paths needs --layers %d (one launch per path and iteration)\n",
                 kLaunchPaths / 2);
    std::exit(2);
  }
  if (o.layers < 2 || o.count < 1 || o.iterations < 1) {
    std::fprintf(stderr, "grad_sync: need --layers >= 2, --count >= 1, --iterations >= 1\n");
    std::exit(2);
  }
  if (o.end_comm_by != "destroy" && o.end_comm_by != "finalize" && o.end_comm_by != "abort") {
    std::fprintf(stderr, "grad_sync: --end-comm-by takes destroy, finalize or abort\n");
    std::exit(2);
  }
  if (o.stream_ordered && o.scattered) {
    std::fprintf(stderr, "grad_sync: --stream-ordered takes contiguous gradients, not --scattered\n");
    std::exit(2);
  }
  return o;
}

std::uint64_t fnv1a(const void* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

void endCommunicator(ncclComm_t comm, const std::string& how) {
  if (how == "abort") {
    CHECK_NCCL(ncclCommAbort(comm));
    return;
  }
  if (how == "finalize") CHECK_NCCL(ncclCommFinalize(comm));
  CHECK_NCCL(ncclCommDestroy(comm));
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.all_launch_paths) openDriver();
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int devices = 0;
  CHECK_CUDA(cudaGetDeviceCount(&devices));
  const int device = rank % devices;
  CHECK_CUDA(cudaSetDevice(device));
  if (o.switch_device >= 0 && devices < 2) {
    std::fprintf(stderr, "grad_sync: --switch-device needs 2 devices per process, the process has %d\n", devices);
    std::exit(2);
  }
  ncclUniqueId id;
  if (rank == 0) CHECK_NCCL(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm = nullptr;
  CHECK_NCCL(ncclCommInitRank(&comm, ranks, id, rank));
  ncclComm_t early = nullptr;  // the communicator of the iterations before --end-comm-at
  if (o.end_comm_at >= 0) CHECK_NCCL(ncclCommSplit(comm, 0, rank, &early, nullptr));

  cudaStream_t compute = nullptr, check = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&check, cudaStreamNonBlocking));
  const auto n = static_cast<std::size_t>(o.count);
  const auto layers = static_cast<std::size_t>(o.layers);
  std::vector<float*> grad(layers), acc(layers);
  std::vector<void*> spacers;
  if (o.scattered) {
    for (std::size_t l = 0; l < layers; ++l) {
      CHECK_CUDA(cudaMalloc(&grad[l], n * sizeof(float)));
      void* spacer = nullptr;  // keeps the next layer's gradient away from this one's
      CHECK_CUDA(cudaMalloc(&spacer, 4096));
      spacers.push_back(spacer);
    }
  } else {
    float* all = nullptr;
    CHECK_CUDA(cudaMalloc(&all, layers * n * sizeof(float)));
    for (std::size_t l = 0; l < layers; ++l) grad[l] = all + l * n;
  }
  float* sink = nullptr;
  CHECK_CUDA(cudaMalloc(&sink, sizeof(float)));
  float* all_acc = nullptr;
  CHECK_CUDA(cudaMalloc(&all_acc, layers * n * sizeof(float)));
  CHECK_CUDA(cudaMemset(all_acc, 0, layers * n * sizeof(float)));
  // cudaMemset runs on the legacy stream, which the non-blocking streams above do not wait for:
  // without this the first updates could add to accumulators still being zeroed (simgpu ran the
  // zeroing's body behind them about once in 40 runs, losing iteration 0's update of a layer).
  CHECK_CUDA(cudaDeviceSynchronize());
  for (std::size_t l = 0; l < layers; ++l) acc[l] = all_acc + l * n;
  float* host[2] = {nullptr, nullptr};
  for (float*& h : host) CHECK_CUDA(cudaMallocHost(reinterpret_cast<void**>(&h), layers * n * sizeof(float)));
  cudaEvent_t update_done = nullptr, check_done[2] = {nullptr, nullptr};
  CHECK_CUDA(cudaEventCreateWithFlags(&update_done, cudaEventDisableTiming));
  for (cudaEvent_t& e : check_done) CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));

  cudaGraphExec_t update_graph = nullptr;
  if (o.graph) {
    cudaGraph_t graph = nullptr;
    CHECK_CUDA(cudaGraphCreate(&graph, 0));
    CHECK_CUDA(addUpdateNodes(graph, acc.data(), grad.data(), o.layers, o.count, o.update_cost));
    CHECK_CUDA(cudaGraphInstantiate(&update_graph, graph, 0));
    CHECK_CUDA(cudaGraphDestroy(graph));
  }
  if (o.stream_ordered) {  // as PyTorch's allocator does: keep reserved memory across synchronisations
    cudaMemPool_t pool = nullptr;
    CHECK_CUDA(cudaDeviceGetDefaultMemPool(&pool, device));
    std::uint64_t keep = UINT64_MAX;
    CHECK_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }

  std::vector<float> expected_acc(layers * n, 0.0f);
  int failures = 0;
  auto verify = [&](int it) {
    const int slot = it % 2;
    CHECK_CUDA(cudaEventSynchronize(check_done[slot]));
    const float* got = host[slot];
    for (std::size_t l = 0; l < layers; ++l) {
      for (std::size_t i = 0; i < n; ++i) {
        float sum = grad_sync::gradientValue(0, it, static_cast<int>(l), static_cast<int>(i));
        for (int r = 1; r < ranks; ++r) sum += grad_sync::gradientValue(r, it, static_cast<int>(l), static_cast<int>(i));
        float& a = expected_acc[l * n + i];
        a = grad_sync::accumulate(a, sum);
        if (std::memcmp(&sum, &got[l * n + i], sizeof(float)) != 0) {
          if (failures++ < 5) {
            std::fprintf(stderr, "grad_sync: rank %d iteration %d layer %zu element %zu: reduced %.9g, expected %.9g\n",
                         rank, it, l, i, static_cast<double>(got[l * n + i]), static_cast<double>(sum));
          }
        }
      }
    }
    if (rank == 0) {
      std::printf("grad_checksum iter=%d value=%016llx\n", it,
                  static_cast<unsigned long long>(fnv1a(got, layers * n * sizeof(float))));
      std::fflush(stdout);
    }
  };

  for (int it = 0; it < o.iterations; ++it) {
    const std::string step = "ProfilerStep#" + std::to_string(it);
    nvtxRangePushA(step.c_str());
    const int slot = it % 2;
    if (it == o.end_comm_at) {
      CHECK_CUDA(cudaStreamSynchronize(compute));  // its last all-reduces have run
      MPI_Barrier(MPI_COMM_WORLD);
      endCommunicator(early, o.end_comm_by);
      early = nullptr;
    }
    const ncclComm_t reducing = early != nullptr ? early : comm;
    if (it > 0) CHECK_CUDA(cudaStreamWaitEvent(compute, check_done[(it - 1) % 2], 0));
    // Where this iteration's gradients are produced: the gradient buffers themselves (reduced in
    // place), or a stream-ordered buffer reduced out of place into them.
    std::vector<float*> produced = grad;
    float* stream_ordered = nullptr;
    constexpr std::size_t kHeader = 64;  // floats
    const std::size_t stream_ordered_bytes = (kHeader + layers * n) * sizeof(float);
    if (o.stream_ordered) {
      CHECK_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&stream_ordered), stream_ordered_bytes, compute));
      for (std::size_t l = 0; l < layers; ++l) produced[l] = stream_ordered + kHeader + l * n;
    }
    if (o.scattered) {
      for (std::size_t l = 0; l < layers; ++l) CHECK_CUDA(cudaMemsetAsync(produced[l], 0, n * sizeof(float), compute));
    } else {
      CHECK_CUDA(cudaMemsetAsync(produced[0], 0, layers * n * sizeof(float), compute));
    }
    // With --all-launch-paths, launch j of iteration `it` goes through path (it + j) mod 8.
    int launch = 0;
    auto nextPath = [&] {
      return o.all_launch_paths ? static_cast<LaunchPath>((it + launch++) % kLaunchPaths) : LaunchPath::Cuda13;
    };
    for (int l = o.layers - 1; l >= 0; --l) {
      CHECK_CUDA(launchProduce(compute, produced[static_cast<std::size_t>(l)], o.count, rank, it, l, o.produce_cost,
                               nextPath()));
    }
    if (rank == o.stall_rank && it == o.stall_iteration) {
      std::this_thread::sleep_for(std::chrono::seconds(o.stall_seconds));
      if (!o.stall_resumes) _exit(9);
    }
    auto syncOnAnotherThread = [&] {
      std::thread syncer([&] {
        CHECK_CUDA(cudaSetDevice(device));  // the current device is per thread
        CHECK_CUDA(cudaStreamSynchronize(compute));
      });
      syncer.join();
    };
    const bool thread_syncs = o.sync_thread_rank >= 0 && it >= 2;
    for (std::size_t l = 0; l < layers; ++l) {
      CHECK_NCCL(ncclAllReduce(produced[l], grad[l], n, ncclFloat, ncclSum, reducing, compute));
      if (rank == o.diverge_rank && it >= 2 && l + 1 == layers / 2) CHECK_CUDA(cudaStreamSynchronize(compute));
      if (thread_syncs && rank == o.sync_thread_rank && l + 1 == layers / 2) syncOnAnotherThread();
    }
    if (thread_syncs && rank != o.sync_thread_rank) syncOnAnotherThread();
    if (stream_ordered != nullptr) {
      CHECK_CUDA(cudaFreeAsync(stream_ordered, compute));
      float* scratch = nullptr;
      CHECK_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&scratch), stream_ordered_bytes, compute));
      CHECK_CUDA(launchProduce(compute, scratch, static_cast<int>(stream_ordered_bytes / sizeof(float)), rank, it,
                               o.layers, o.produce_cost));
      CHECK_CUDA(cudaFreeAsync(scratch, compute));
    }
    if (o.extern_c) CHECK_CUDA(launchInspect(compute, grad[0], o.count, sink));
    if (it == o.switch_device) {
      CHECK_CUDA(cudaSetDevice((device + 1) % devices));
      void* scratch = nullptr;
      CHECK_CUDA(cudaMalloc(&scratch, n * sizeof(float)));
      CHECK_CUDA(cudaMemset(scratch, 0, n * sizeof(float)));
      CHECK_CUDA(cudaFree(scratch));
      CHECK_CUDA(cudaSetDevice(device));
    }
    auto launchUpdates = [&] {
      for (std::size_t l = 0; l < layers; ++l) {
        CHECK_CUDA(launchUpdate(compute, acc[l], grad[l], o.count, o.update_cost, nextPath()));
      }
    };
    cudaGraphExec_t exec = nullptr;
    if (o.graph) {
      CHECK_CUDA(cudaGraphLaunch(update_graph, compute));
    } else if (o.capture) {
      cudaGraph_t graph = nullptr;
      CHECK_CUDA(cudaStreamBeginCapture(compute, cudaStreamCaptureModeThreadLocal));
      launchUpdates();
      CHECK_CUDA(cudaStreamEndCapture(compute, &graph));
      CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
      CHECK_CUDA(cudaGraphDestroy(graph));
      CHECK_CUDA(cudaGraphLaunch(exec, compute));
    } else if (o.thread_from >= 0 && it >= o.thread_from) {
      std::thread updater([&] {
        CHECK_CUDA(cudaSetDevice(device));  // the current device is per thread
        launchUpdates();
      });
      updater.join();
    } else {
      launchUpdates();
    }
    CHECK_CUDA(cudaEventRecord(update_done, compute));
    CHECK_CUDA(cudaStreamWaitEvent(check, update_done, 0));
    if (o.scattered) {
      for (std::size_t l = 0; l < layers; ++l) {
        CHECK_CUDA(cudaMemcpyAsync(host[slot] + l * n, grad[l], n * sizeof(float), cudaMemcpyDeviceToHost, check));
      }
    } else {
      CHECK_CUDA(cudaMemcpyAsync(host[slot], grad[0], layers * n * sizeof(float), cudaMemcpyDeviceToHost, check));
    }
    CHECK_CUDA(cudaEventRecord(check_done[slot], check));
    nvtxRangePop();
    if (rank == o.exit_after_issue_rank && it == o.stall_iteration) _exit(9);
    // The host stays one iteration ahead: it checks the previous one while this one runs.
    if (it > 0) verify(it - 1);
    if (exec != nullptr) {
      CHECK_CUDA(cudaStreamSynchronize(compute));
      CHECK_CUDA(cudaGraphExecDestroy(exec));
    }
  }
  verify(o.iterations - 1);
  CHECK_CUDA(cudaDeviceSynchronize());
  if (update_graph != nullptr) CHECK_CUDA(cudaGraphExecDestroy(update_graph));
  std::vector<float> got_acc(layers * n);
  CHECK_CUDA(cudaMemcpy(got_acc.data(), all_acc, layers * n * sizeof(float), cudaMemcpyDeviceToHost));
  if (std::memcmp(got_acc.data(), expected_acc.data(), got_acc.size() * sizeof(float)) != 0) {
    std::size_t differ = 0, first = got_acc.size();
    for (std::size_t i = 0; i < got_acc.size(); ++i) {
      if (std::memcmp(&got_acc[i], &expected_acc[i], sizeof(float)) == 0) continue;
      if (differ++ == 0) first = i;
    }
    // Which elements, and by how much, tells a missed update from a stale gradient.
    std::fprintf(stderr,
                 "grad_sync: rank %d: the updated values differ from the host's: %zu of %zu, the first layer %zu "
                 "element %zu: %.9g, expected %.9g\n",
                 rank, differ, got_acc.size(), first / n, first % n, static_cast<double>(got_acc[first]),
                 static_cast<double>(expected_acc[first]));
    ++failures;
  }
  if (early != nullptr) CHECK_NCCL(ncclCommDestroy(early));
  CHECK_NCCL(ncclCommDestroy(comm));
  MPI_Finalize();
  if (failures > 0) {
    std::fprintf(stderr, "grad_sync: rank %d: %d mismatches\n", rank, failures);
    return 1;
  }
  return 0;
}
