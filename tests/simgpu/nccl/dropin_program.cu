// An ordinary CUDA + NCCL + MPI program, compiled against the toolkit's shared runtime and
// NCCL, run unchanged on simgpu under mpirun by a test: the unique id travels by MPI, data
// goes to and from the device with cudaMemcpy, collectives and a send/recv ring run on a
// stream. Exits 0 only if every result is right and prints "all checks passed".
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <vector>

namespace {

int failures = 0;

#define CHECK_CUDA(call)                                                                      \
  do {                                                                                        \
    cudaError_t err_ = (call);                                                                \
    if (err_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "FAIL %s: %s\n", #call, cudaGetErrorString(err_));                 \
      ++failures;                                                                             \
    }                                                                                         \
  } while (0)

#define CHECK_NCCL(call)                                                                      \
  do {                                                                                        \
    ncclResult_t res_ = (call);                                                               \
    if (res_ != ncclSuccess) {                                                                \
      std::fprintf(stderr, "FAIL %s: %s (%s)\n", #call, ncclGetErrorString(res_), ncclGetLastError(nullptr)); \
      ++failures;                                                                             \
    }                                                                                         \
  } while (0)

void expect(bool ok, const char* what, int rank) {
  if (!ok) {
    std::fprintf(stderr, "FAIL rank %d: %s\n", rank, what);
    ++failures;
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int version = 0;
  CHECK_NCCL(ncclGetVersion(&version));
  expect(version == NCCL_VERSION_CODE, "ncclGetVersion gives the header's version", rank);

  ncclUniqueId id;
  if (rank == 0) CHECK_NCCL(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  CHECK_CUDA(cudaSetDevice(0));
  ncclComm_t comm = nullptr;
  CHECK_NCCL(ncclCommInitRank(&comm, nranks, id, rank));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreate(&stream));

  constexpr int kCount = 4096;
  std::vector<float> host(kCount * nranks);
  float* send = nullptr;
  float* recv = nullptr;
  CHECK_CUDA(cudaMalloc(&send, sizeof(float) * kCount * nranks));
  CHECK_CUDA(cudaMalloc(&recv, sizeof(float) * kCount * nranks));

  // All-reduce: every element sums to n(n+1)/2.
  for (int i = 0; i < kCount; ++i) host[i] = static_cast<float>(rank + 1);
  CHECK_CUDA(cudaMemcpy(send, host.data(), sizeof(float) * kCount, cudaMemcpyHostToDevice));
  CHECK_NCCL(ncclAllReduce(send, recv, kCount, ncclFloat, ncclSum, comm, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(host.data(), recv, sizeof(float) * kCount, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < kCount; ++i) ok = ok && host[i] == nranks * (nranks + 1) / 2.0f;
  expect(ok, "ncclAllReduce sums every rank's data", rank);

  // All-gather: block r holds rank r's values.
  for (int i = 0; i < kCount; ++i) host[i] = static_cast<float>(rank * 10 + i % 7);
  CHECK_CUDA(cudaMemcpy(send, host.data(), sizeof(float) * kCount, cudaMemcpyHostToDevice));
  CHECK_NCCL(ncclAllGather(send, recv, kCount, ncclFloat, comm, stream));
  CHECK_CUDA(cudaMemcpyAsync(host.data(), recv, sizeof(float) * kCount * nranks, cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  ok = true;
  for (int r = 0; r < nranks; ++r) {
    for (int i = 0; i < kCount; ++i) ok = ok && host[r * kCount + i] == static_cast<float>(r * 10 + i % 7);
  }
  expect(ok, "ncclAllGather places every rank's block", rank);

  // Broadcast from the last rank, then a send/recv ring in one group.
  for (int i = 0; i < kCount; ++i) host[i] = static_cast<float>(rank == nranks - 1 ? 42 : -1);
  CHECK_CUDA(cudaMemcpy(send, host.data(), sizeof(float) * kCount, cudaMemcpyHostToDevice));
  CHECK_NCCL(ncclBroadcast(send, send, kCount, ncclFloat, nranks - 1, comm, stream));
  CHECK_NCCL(ncclGroupStart());
  CHECK_NCCL(ncclSend(send, kCount, ncclFloat, (rank + 1) % nranks, comm, stream));
  CHECK_NCCL(ncclRecv(recv, kCount, ncclFloat, (rank + nranks - 1) % nranks, comm, stream));
  CHECK_NCCL(ncclGroupEnd());
  CHECK_CUDA(cudaMemcpy(host.data(), recv, sizeof(float) * kCount, cudaMemcpyDeviceToHost));  // syncs with the legacy stream
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(host.data(), recv, sizeof(float) * kCount, cudaMemcpyDeviceToHost));
  ok = true;
  for (int i = 0; i < kCount; ++i) ok = ok && host[i] == 42.0f;
  expect(ok, "ncclBroadcast then a send/recv ring deliver the root's data", rank);

  ncclResult_t async = ncclInternalError;
  CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
  expect(async == ncclSuccess, "no asynchronous error", rank);
  CHECK_NCCL(ncclCommFinalize(comm));
  CHECK_NCCL(ncclCommDestroy(comm));
  CHECK_CUDA(cudaFree(send));
  CHECK_CUDA(cudaFree(recv));
  CHECK_CUDA(cudaStreamDestroy(stream));

  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_failures == 0) std::printf("all checks passed on %d ranks\n", nranks);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
