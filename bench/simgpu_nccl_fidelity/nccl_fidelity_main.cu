// simgpu NCCL fidelity: all-reduce of float32 from 1 KiB to 256 MiB (the size a real NCCL
// call would move), each as a single call (barrier, call, synchronize) and as ten calls
// queued back to back (as nccl-tests times them), on every rank. For each size it prints
//   - modelled: from the call to the modelled end of the (last) collective, which simgpu's
//     op observer reports: launch latency, waiting for the last rank to arrive, and the
//     collective's duration from the link model;
//   - measured: from the call to the return of cudaStreamSynchronize, wall clock;
//   - the bus bandwidth of the modelled duration and of the measured time per call
//     (nccl-tests' busbw = size / time * 2(n-1)/n), next to the link's bandwidth.
// Every figure is the median over repetitions of the slowest rank's. Run on simgpu:
//   scripts/run-on-simgpu.sh -np 2 build/bin/simgpu_nccl_fidelity
// SIMGPU_PROFILE defaults to bench/simgpu_nccl_fidelity/profile.json: the default machine
// with collectives.bytes_scale = 256, so that a 256 MiB all-reduce moves 1 MiB of real data
// (simgpu reduces real bytes through shared memory, which a host cannot do at NVLink speed).
// `--max-bytes N` stops at N modelled bytes.
#include <simgpu/core/observer.hpp>
#include <simgpu/core/runtime.hpp>

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

int rank = 0;
int nranks = 1;

void check(bool ok, const char* what, const char* detail) {
  if (!ok) {
    std::fprintf(stderr, "simgpu_nccl_fidelity (rank %d): %s failed: %s\n", rank, what, detail);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

void checkCuda(cudaError_t err, const char* what) { check(err == cudaSuccess, what, cudaGetErrorString(err)); }
void checkNccl(ncclResult_t r, const char* what) { check(r == ncclSuccess, what, ncclGetErrorString(r)); }

// The modelled start and end of the last collective, from simgpu's op observer.
std::mutex g_mu;
simgpu::CompletedOp g_last;

void observe(const simgpu::CompletedOp& op, void*) {
  if (op.kind != simgpu::OpKind::Collective) return;
  std::lock_guard lock(g_mu);
  g_last = op;
}

simgpu::CompletedOp lastCollective() {
  std::lock_guard lock(g_mu);
  return g_last;
}

// The same figure on every rank: the slowest rank's.
double slowest(double value) {
  double out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

std::string bytesText(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (bytes >= 1024 && u < 3) {
    bytes /= 1024;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.0f %s", bytes, units[u]);
  return text;
}

struct Row {
  const char* how = "";
  int batch = 1;
  double modelled = 0;  // per call, median
  double measured = 0;  // per call, median
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  double max_bytes = 256.0 * (1 << 20);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc) max_bytes = std::atof(argv[++i]);
  }
  if (std::getenv("SIMGPU_PROFILE") == nullptr) setenv("SIMGPU_PROFILE", SIMGPU_NCCL_FIDELITY_PROFILE, 1);
  checkCuda(cudaSetDevice(0), "cudaSetDevice");
  const simgpu::Profile& p = simgpu::profile();
  simgpu::setOpObserver(observe, nullptr);

  ncclUniqueId id;
  if (rank == 0) checkNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm = nullptr;
  checkNccl(ncclCommInitRank(&comm, nranks, id, rank), "ncclCommInitRank");
  cudaStream_t stream = nullptr;
  checkCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");

  const double scale = p.collectives.bytes_scale;
  const bool one_host = nranks <= p.ranks_per_host;
  const simgpu::LinkSpec& link = one_host ? p.links.intra_host : p.links.inter_host;
  const double bus_factor = 2.0 * (nranks - 1) / nranks;
  if (rank == 0) {
    std::printf("profile: %s (%s)\n", p.name.c_str(), p.source.c_str());
    std::printf("%d ranks, one device each; the ring crosses %s links (%.0f ns, %.0f GB/s); bytes_scale %.0f\n\n",
                nranks, one_host ? "intra_host" : "inter_host", static_cast<double>(link.latency_ns), link.bandwidth / 1e9, scale);
    std::printf("%-9s %-9s %-6s %12s %12s %8s %14s %14s\n", "size", "real", "how", "modelled us", "measured us", "error",
                "busbw model", "busbw measured");
    std::printf("(modelled and measured: per call, from the call to its end; busbw model: the collective's own\n"
                " duration; busbw measured: the measured time per call)\n");
  }

  const std::size_t max_real = static_cast<std::size_t>(std::max(4.0, max_bytes / scale));
  void* buffer = nullptr;
  checkCuda(cudaMalloc(&buffer, max_real), "cudaMalloc");
  checkCuda(cudaMemset(buffer, 0, max_real), "cudaMemset");

  std::vector<double> errors_long;
  for (double size = 1024; size <= max_bytes; size *= 4) {
    const std::size_t count = std::max<std::size_t>(1, static_cast<std::size_t>(size / scale / 4));
    auto allreduce = [&] {
      checkNccl(ncclAllReduce(buffer, buffer, count, ncclFloat32, ncclSum, comm, stream), "ncclAllReduce");
    };
    allreduce();  // warm up
    checkCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const simgpu::CompletedOp warm = lastCollective();
    const double op_ns = slowest(static_cast<double>(warm.end_ns - warm.start_ns));
    const int reps = op_ns < 1e6 ? 40 : op_ns < 10e6 ? 15 : 6;
    Row rows[] = {{"single", 1, 0, 0}, {"x10", 10, 0, 0}};
    for (Row& row : rows) {
      std::vector<double> modelled, measured;
      for (int r = 0; r < reps; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        const simgpu::TimeNs t0 = simgpu::nowNs();
        for (int k = 0; k < row.batch; ++k) allreduce();
        checkCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        const simgpu::TimeNs t1 = simgpu::nowNs();
        modelled.push_back(slowest(static_cast<double>(lastCollective().end_ns - t0) / row.batch));
        measured.push_back(slowest(static_cast<double>(t1 - t0) / row.batch));
      }
      row.modelled = median(modelled);
      row.measured = median(measured);
      const double error = (row.measured - row.modelled) / row.modelled;
      if (row.modelled >= 1e6) errors_long.push_back(std::fabs(error));
      if (rank == 0) {
        std::printf("%-9s %-9s %-6s %12.1f %12.1f %+7.1f%% %10.1f GB/s %10.1f GB/s\n", bytesText(size).c_str(),
                    bytesText(count * 4.0).c_str(), row.how, row.modelled / 1e3, row.measured / 1e3, 100 * error,
                    size / op_ns * bus_factor, size / row.measured * bus_factor);
      }
    }
  }
  if (rank == 0) {
    if (!errors_long.empty()) {
      std::printf("\nmedian |error| for collectives of 1 ms and more: %.2f%% (%zu samples)\n", 100 * median(errors_long),
                  errors_long.size());
    }
    const simgpu::Stats stats = simgpu::stats();
    std::printf("ops on rank 0 whose real work took longer than modelled: %llu of %llu\n",
                static_cast<unsigned long long>(stats.ops_overran), static_cast<unsigned long long>(stats.ops_completed));
  }
  simgpu::setOpObserver(nullptr, nullptr);
  checkNccl(ncclCommDestroy(comm), "ncclCommDestroy");
  checkCuda(cudaFree(buffer), "cudaFree");
  checkCuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
  MPI_Finalize();
  return 0;
}
