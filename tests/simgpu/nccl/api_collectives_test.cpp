// Every collective, type and operator through libnccl.so.2 on the four devices of one process
// (one ncclCommInitAll communicator, calls of the four ranks in one group), against results
// computed locally from all ranks' inputs.
#include "api_calls.hpp"
#include "api_fixture.hpp"
#include "reference.hpp"

#include <random>

namespace simgpu::nccl {
namespace {

using testing::DeviceBuffer;
using testing::FourDevices;
using testing::inputOf;

class Collectives : public FourDevices {
 protected:
  // Runs `a` on all four ranks in one group and returns how many ranks got a wrong result.
  int runAndCheck(const CollectiveArgs& a, std::uint32_t salt) {
    std::vector<std::vector<char>> inputs;
    std::vector<DeviceBuffer> send, recv;
    const std::size_t es = datatypeSize(a.datatype);
    for (int d = 0; d < kDevices; ++d) {
      inputs.push_back(inputOf(a.datatype, d, testing::sendElements(a.kind, a.count, kDevices), salt));
      send.emplace_back(d, inputs.back().size());
      send.back().fill(inputs.back());
      recv.emplace_back(d, testing::recvElements(a.kind, a.count, kDevices) * es);
    }
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    for (int d = 0; d < kDevices; ++d) {
      EXPECT_EQ(testing::issue(a, send[d].get(), recv[d].get(), comms[d], streams[d]), ncclSuccess);
    }
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
    syncAll();
    int wrong = 0;
    for (int d = 0; d < kDevices; ++d) {
      if (testing::holdsResult(a, d) && recv[d].contents() != testing::expected(a, kDevices, d, inputs)) {
        ADD_FAILURE() << "rank " << d << ": wrong result of " << describeCall(CollDesc{a.count, a.root, static_cast<std::uint8_t>(a.kind),
                                                                                         static_cast<std::uint8_t>(a.datatype),
                                                                                         static_cast<std::uint8_t>(a.op), 0});
        ++wrong;
      }
      EXPECT_EQ(asyncError(d), ncclSuccess);
    }
    return wrong;
  }
};

TEST_F(Collectives, EveryCollectiveTypeAndOperator) {
  std::uint32_t salt = 0;
  for (const CollectiveArgs& a : testing::everyCall(300, kDevices)) EXPECT_EQ(runAndCheck(a, ++salt), 0);
}

TEST_F(Collectives, LargeMessagesTakeManyChunks) {
  CollectiveArgs a;
  a.datatype = ncclFloat32;
  a.count = 1 << 20;  // 4 MiB per rank: eight 512 KiB steps
  EXPECT_EQ(runAndCheck(a, 1), 0);
  a.kind = CollKind::AllGather;
  a.count = 300'000;
  EXPECT_EQ(runAndCheck(a, 2), 0);
  a.kind = CollKind::ReduceScatter;
  a.datatype = ncclBfloat16;
  a.op = RedOp::Max;
  EXPECT_EQ(runAndCheck(a, 3), 0);
}

TEST_F(Collectives, InPlaceForms) {
  constexpr std::size_t kCount = 1000;
  std::vector<DeviceBuffer> bufs;
  for (int d = 0; d < kDevices; ++d) {
    bufs.emplace_back(d, kCount * kDevices * sizeof(std::int32_t));
    auto* p = reinterpret_cast<std::int32_t*>(bufs[d].get());
    for (std::size_t i = 0; i < kCount * kDevices; ++i) p[i] = static_cast<std::int32_t>(i) * (d + 1);
  }
  auto at = [&](int d, std::size_t i) { return reinterpret_cast<std::int32_t*>(bufs[d].get())[i]; };
  // Reduce-scatter in place: recvbuff = sendbuff + rank * recvcount.
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) {
    ASSERT_EQ(ncclReduceScatter(bufs[d].get(), bufs[d].bytes() + d * kCount * 4, kCount, ncclInt32, ncclSum, comms[d], streams[d]), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  syncAll();
  for (int d = 0; d < kDevices; ++d) {
    for (std::size_t i = 0; i < kCount; ++i) ASSERT_EQ(at(d, d * kCount + i), static_cast<std::int32_t>((d * kCount + i) * 10));
  }
  // All-gather in place: sendbuff = recvbuff + rank * sendcount.
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) {
    ASSERT_EQ(ncclAllGather(bufs[d].bytes() + d * kCount * 4, bufs[d].get(), kCount, ncclInt32, comms[d], streams[d]), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  syncAll();
  for (int d = 0; d < kDevices; ++d) {
    for (std::size_t i = 0; i < kCount * kDevices; ++i) ASSERT_EQ(at(d, i), static_cast<std::int32_t>(i * 10));
  }
  // The legacy in-place broadcast from rank 2.
  reinterpret_cast<std::int32_t*>(bufs[2].get())[5] = -7;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) ASSERT_EQ(ncclBcast(bufs[d].get(), kCount, ncclInt32, 2, comms[d], streams[d]), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  syncAll();
  for (int d = 0; d < kDevices; ++d) {
    EXPECT_EQ(at(d, 5), -7);
  }
}

TEST_F(Collectives, PreMulSumWithHostAndDeviceScalars) {
  constexpr std::size_t kCount = 64;
  std::vector<DeviceBuffer> bufs, scalars;
  std::array<ncclRedOp_t, kDevices> ops{};
  for (int d = 0; d < kDevices; ++d) {
    bufs.emplace_back(d, kCount * sizeof(double));
    for (std::size_t i = 0; i < kCount; ++i) reinterpret_cast<double*>(bufs[d].get())[i] = static_cast<double>(d + 1);
    scalars.emplace_back(d, sizeof(double));
    double host_scalar = 0.5 * (d + 1);
    // Even ranks pass the scalar by value; odd ranks leave it in device memory, read when the
    // collective runs (so the value written after creation counts).
    if (d % 2 == 0) {
      ASSERT_EQ(ncclRedOpCreatePreMulSum(&ops[d], &host_scalar, ncclFloat64, ncclScalarHostImmediate, comms[d]), ncclSuccess);
    } else {
      ASSERT_EQ(ncclRedOpCreatePreMulSum(&ops[d], scalars[d].get(), ncclFloat64, ncclScalarDevice, comms[d]), ncclSuccess);
      *reinterpret_cast<double*>(scalars[d].get()) = host_scalar;
    }
    EXPECT_GE(static_cast<int>(ops[d]), static_cast<int>(ncclNumOps));
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int d = 0; d < kDevices; ++d) ASSERT_EQ(ncclAllReduce(bufs[d].get(), bufs[d].get(), kCount, ncclFloat64, ops[d], comms[d], streams[d]), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  syncAll();
  const double want = 1 * 0.5 + 2 * 1.0 + 3 * 1.5 + 4 * 2.0;
  for (int d = 0; d < kDevices; ++d) {
    EXPECT_EQ(reinterpret_cast<double*>(bufs[d].get())[kCount - 1], want);
    // The operator belongs to its type: float32 is refused.
    EXPECT_EQ(ncclAllReduce(bufs[d].get(), bufs[d].get(), 1, ncclFloat32, ops[d], comms[d], streams[d]), ncclInvalidArgument);
    EXPECT_EQ(ncclRedOpDestroy(ops[d], comms[d]), ncclSuccess);
    EXPECT_EQ(ncclRedOpDestroy(ops[d], comms[d]), ncclInvalidArgument);
    EXPECT_EQ(ncclRedOpDestroy(ncclSum, comms[d]), ncclInvalidArgument);
  }
}

// However a gradient is bucketed into calls, and whether the calls are grouped, every
// element comes out with the same bits on every rank.
TEST_F(Collectives, BucketingNeverChangesABit) {
  constexpr std::size_t kCount = 60000;  // the whole call takes a split step, the buckets do not
  std::mt19937 rng(11);
  std::vector<std::size_t> buckets;
  for (std::size_t done = 0; done < kCount;) {
    const std::size_t n = std::min<std::size_t>(kCount - done, 1 + rng() % 6000);
    buckets.push_back(n);
    done += n;
  }
  std::vector<std::vector<char>> results;
  for (int mode = 0; mode < 3; ++mode) {  // one call; one call per bucket; all buckets in one group
    std::vector<DeviceBuffer> bufs;
    for (int d = 0; d < kDevices; ++d) {
      bufs.emplace_back(d, kCount * 2);
      bufs.back().fill(inputOf(ncclBfloat16, d, kCount));
    }
    const std::vector<std::size_t> split = mode == 0 ? std::vector<std::size_t>{kCount} : buckets;
    if (mode == 2) {
      ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    }
    std::size_t offset = 0;
    for (std::size_t n : split) {
      ASSERT_EQ(ncclGroupStart(), ncclSuccess);
      for (int d = 0; d < kDevices; ++d) {
        char* p = bufs[d].bytes() + offset * 2;
        ASSERT_EQ(ncclAllReduce(p, p, n, ncclBfloat16, ncclSum, comms[d], streams[d]), ncclSuccess);
      }
      ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
      offset += n;
    }
    if (mode == 2) {
      ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    }
    syncAll();
    for (int d = 1; d < kDevices; ++d) {
      EXPECT_EQ(bufs[d].contents(), bufs[0].contents()) << "ranks disagree";
    }
    results.push_back(bufs[0].contents());
  }
  EXPECT_EQ(results[1], results[0]);
  EXPECT_EQ(results[2], results[0]);
}

TEST_F(Collectives, EmptyCollectivesAreSkipped) {
  for (int d = 0; d < kDevices; ++d) {
    EXPECT_EQ(ncclAllReduce(nullptr, nullptr, 0, ncclFloat32, ncclSum, comms[d], streams[d]), ncclSuccess);
  }
  syncAll();
  for (int d = 0; d < kDevices; ++d) {
    EXPECT_EQ(asyncError(d), ncclSuccess);
  }
}

}  // namespace
}  // namespace simgpu::nccl
