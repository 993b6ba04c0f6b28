// libnccl.so.2 between processes: run under mpirun (2 and 4 ranks, one device each), the
// unique id travels by MPI as in real programs. Every rank runs the same tests in the same
// order; the program fails if any rank fails.
#include "api_calls.hpp"
#include "api_harness.hpp"
#include "reference.hpp"
#include "simgpu/core/observer.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>

namespace simgpu::nccl {
namespace {

using testing::DeviceBuffer;
using testing::inputOf;

int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int worldSize() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// A fresh communicator over all processes for every test (a test may leave its own failed).
class Processes : public ::testing::Test {
 protected:
  void SetUp() override {
    rank = worldRank();
    nranks = worldSize();
    ncclUniqueId id;
    if (rank == 0) {
      ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
    }
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    ASSERT_EQ(simgpu::setCurrentDevice(0), cudaSuccess);
    ASSERT_EQ(ncclCommInitRank(&comm, nranks, id, rank), ncclSuccess);
    stream = testing::makeStream(0);
  }

  void TearDown() override {
    simgpu::synchronizeStream(stream);
    simgpu::destroyStream(stream);
    if (comm != nullptr) ncclCommDestroy(comm);
    MPI_Barrier(MPI_COMM_WORLD);  // keep the ranks in step from test to test
  }

  ncclResult_t asyncError() {
    ncclResult_t state = ncclInternalError;
    EXPECT_EQ(ncclCommGetAsyncError(comm, &state), ncclSuccess);
    return state;
  }

  int rank = 0;
  int nranks = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

TEST_F(Processes, EveryCollectiveTypeAndOperator) {
  std::uint32_t salt = 0;
  for (const CollectiveArgs& a : testing::everyCall(300, nranks)) {
    ++salt;
    std::vector<std::vector<char>> inputs;
    for (int r = 0; r < nranks; ++r) inputs.push_back(inputOf(a.datatype, r, testing::sendElements(a.kind, a.count, nranks), salt));
    DeviceBuffer send(0, inputs[rank].size());
    send.fill(inputs[rank]);
    DeviceBuffer recv(0, testing::recvElements(a.kind, a.count, nranks) * datatypeSize(a.datatype));
    ASSERT_EQ(testing::issue(a, send.get(), recv.get(), comm, stream), ncclSuccess);
    testing::sync(stream);
    if (testing::holdsResult(a, rank)) {
      EXPECT_EQ(recv.contents(), testing::expected(a, nranks, rank, inputs))
          << collKindName(a.kind) << " " << datatypeName(a.datatype) << " " << redOpName(a.op);
    }
  }
  EXPECT_EQ(asyncError(), ncclSuccess);
}

TEST_F(Processes, LargeAllReduce) {
  constexpr std::size_t kCount = 1 << 19;  // 2 MiB of float32 per rank: several steps
  std::vector<std::vector<char>> inputs;
  for (int r = 0; r < nranks; ++r) inputs.push_back(inputOf(ncclFloat32, r, kCount));
  DeviceBuffer buf(0, kCount * 4);
  buf.fill(inputs[rank]);
  ASSERT_EQ(ncclAllReduce(buf.get(), buf.get(), kCount, ncclFloat32, ncclSum, comm, stream), ncclSuccess);
  testing::sync(stream);
  CollectiveArgs a;
  a.count = kCount;
  EXPECT_EQ(buf.contents(), testing::expected(a, nranks, rank, inputs));
}

TEST_F(Processes, SendRecvRingInAnyOrder) {
  constexpr std::size_t kCount = 200'000;
  const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  DeviceBuffer send(0, kCount * 2), recv(0, kCount * 2);
  send.fill(inputOf(ncclFloat16, rank, kCount));
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  if (rank % 2 == 0) {
    ASSERT_EQ(ncclSend(send.get(), kCount, ncclFloat16, next, comm, stream), ncclSuccess);
    ASSERT_EQ(ncclRecv(recv.get(), kCount, ncclFloat16, prev, comm, stream), ncclSuccess);
  } else {
    ASSERT_EQ(ncclRecv(recv.get(), kCount, ncclFloat16, prev, comm, stream), ncclSuccess);
    ASSERT_EQ(ncclSend(send.get(), kCount, ncclFloat16, next, comm, stream), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  testing::sync(stream);
  EXPECT_EQ(recv.contents(), inputOf(ncclFloat16, prev, kCount));
}

TEST_F(Processes, MismatchedSizesFailEveryRankWithoutHanging) {
  DeviceBuffer buf(0, 4096);
  const std::size_t count = rank == nranks - 1 ? 300 : 200;
  ASSERT_EQ(ncclAllReduce(buf.get(), buf.get(), count, ncclFloat32, ncclSum, comm, stream), ncclSuccess);
  testing::sync(stream);
  EXPECT_EQ(asyncError(), ncclInvalidUsage);
  const std::string message = ncclGetLastError(comm);
  const std::string last = std::to_string(nranks - 1);
  EXPECT_NE(message.find("rank(s) " + last + " called AllReduce(count=300, float32, sum)"), std::string::npos) << message;
  EXPECT_NE(message.find("called AllReduce(count=200, float32, sum)"), std::string::npos) << message;
}

TEST_F(Processes, SplitByParity) {
  ncclComm_t half = nullptr;
  ASSERT_EQ(ncclCommSplit(comm, rank % 2, rank, &half, nullptr), ncclSuccess);
  int count = 0, sub_rank = -1;
  ASSERT_EQ(ncclCommCount(half, &count), ncclSuccess);
  ASSERT_EQ(ncclCommUserRank(half, &sub_rank), ncclSuccess);
  EXPECT_EQ(count, (nranks + 1 - rank % 2) / 2);
  EXPECT_EQ(sub_rank, rank / 2);
  DeviceBuffer buf(0, sizeof(std::int64_t));
  *reinterpret_cast<std::int64_t*>(buf.get()) = rank;
  ASSERT_EQ(ncclAllReduce(buf.get(), buf.get(), 1, ncclInt64, ncclSum, half, stream), ncclSuccess);
  testing::sync(stream);
  std::int64_t want = 0;
  for (int r = rank % 2; r < nranks; r += 2) want += r;
  EXPECT_EQ(*reinterpret_cast<std::int64_t*>(buf.get()), want);
  EXPECT_EQ(ncclCommDestroy(half), ncclSuccess);
}

// Every rank gets the same bits, however the gradient is bucketed.
TEST_F(Processes, BucketingNeverChangesABit) {
  constexpr std::size_t kCount = 100000;  // the whole call takes split steps, the buckets do not
  std::mt19937 rng(5);  // the same buckets on every rank
  std::vector<std::size_t> buckets;
  for (std::size_t done = 0; done < kCount;) {
    const std::size_t n = std::min<std::size_t>(kCount - done, 1 + rng() % 9000);
    buckets.push_back(n);
    done += n;
  }
  DeviceBuffer whole(0, kCount * 2), pieces(0, kCount * 2);
  whole.fill(inputOf(ncclFloat16, rank, kCount));
  pieces.fill(inputOf(ncclFloat16, rank, kCount));
  ASSERT_EQ(ncclAllReduce(whole.get(), whole.get(), kCount, ncclFloat16, ncclSum, comm, stream), ncclSuccess);
  std::size_t offset = 0;
  for (std::size_t n : buckets) {
    ASSERT_EQ(ncclAllReduce(pieces.bytes() + offset * 2, pieces.bytes() + offset * 2, n, ncclFloat16, ncclSum, comm, stream), ncclSuccess);
    offset += n;
  }
  testing::sync(stream);
  EXPECT_EQ(whole.contents(), pieces.contents());
  std::vector<char> all(static_cast<std::size_t>(nranks) * kCount * 2);
  MPI_Allgather(whole.get(), static_cast<int>(kCount * 2), MPI_BYTE, all.data(), static_cast<int>(kCount * 2), MPI_BYTE, MPI_COMM_WORLD);
  for (int r = 1; r < nranks; ++r) {
    EXPECT_TRUE(std::equal(all.begin(), all.begin() + kCount * 2, all.begin() + r * kCount * 2)) << "rank " << r << " differs";
  }
}

struct Observed {
  std::mutex mu;
  std::vector<simgpu::CompletedOp> ops;
};

void observe(const simgpu::CompletedOp& op, void* data) {
  auto* o = static_cast<Observed*>(data);
  std::lock_guard lock(o->mu);
  o->ops.push_back(op);
}

// The modelled all-reduce starts when the last rank arrives and ends at the same moment on
// every rank (CLOCK_MONOTONIC is shared by the processes of one machine).
TEST_F(Processes, EveryRankEndsTheCollectiveTogether) {
  DeviceBuffer buf(0, 1 << 20);
  Observed observed;
  simgpu::setOpObserver(observe, &observed);
  ASSERT_EQ(ncclAllReduce(buf.get(), buf.get(), 1 << 18, ncclFloat32, ncclSum, comm, stream), ncclSuccess);
  testing::sync(stream);
  simgpu::setOpObserver(nullptr, nullptr);
  ASSERT_EQ(observed.ops.size(), 1u);
  const long long mine[2] = {observed.ops[0].start_ns, observed.ops[0].end_ns};
  std::vector<long long> all(2 * static_cast<std::size_t>(nranks));
  MPI_Allgather(mine, 2, MPI_LONG_LONG, all.data(), 2, MPI_LONG_LONG, MPI_COMM_WORLD);
  for (int r = 0; r < nranks; ++r) {
    EXPECT_EQ(all[2 * r], all[0]);
    EXPECT_EQ(all[2 * r + 1], all[1]);
  }
}

// Prints the failures of ranks other than 0 (their full output would interleave with rank 0's).
class FailurePrinter : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.failed()) {
      std::fprintf(stderr, "rank %d: %s:%d: %s\n", worldRank(), result.file_name() ? result.file_name() : "?",
                   result.line_number(), result.summary());
    }
  }
};

}  // namespace
}  // namespace simgpu::nccl

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  simgpu::nccl::testing::useTestProfile();
  // A rank that fails an assertion and skips a collective makes the others wait: not for long.
  setenv("SIMGPU_NCCL_TIMEOUT_S", "20", 0);
  ::testing::InitGoogleTest(&argc, argv);
  if (simgpu::nccl::worldRank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new simgpu::nccl::FailurePrinter);
  }
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
