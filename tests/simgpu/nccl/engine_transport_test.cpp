// The transport between ranks that are threads of one process (the shape of several devices
// in one process): every collective, type and operator against a reference, point-to-point
// in any order, mismatches and missing peers turned into errors, and bucketing that never
// changes a bit.
#include "engine_harness.hpp"
#include "simgpu/nccl/task_group.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace simgpu::nccl {
namespace {

using testing::inputOf;
using testing::join;
using testing::kAllOps;
using testing::kAllTypes;
using testing::onThreads;
using testing::runOne;
using testing::everyCall;
using testing::expected;
using testing::holdsResult;
using testing::isRooted;
using testing::recvElements;
using testing::sendElements;

const CostParams kTransportCost = testing::testCost();

// Runs `calls` on every rank of a fresh communicator of `nranks` threads and checks every
// rank's output; returns the number of wrong outputs.
int runAndCheck(int nranks, std::size_t chunk, const std::vector<CollectiveArgs>& calls) {
  const CommKey key = randomCommKey();
  const auto wrong = onThreads<int>(nranks, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    if (Status st = join(key, nranks, rank, chunk, &ep); !st.ok()) {
      ADD_FAILURE() << st.message;
      return 1000;
    }
    int bad = 0;
    std::uint32_t salt = 0;
    for (CollectiveArgs a : calls) {
      ++salt;
      std::vector<std::vector<char>> inputs;
      for (int r = 0; r < nranks; ++r) inputs.push_back(inputOf(a.datatype, r, sendElements(a.kind, a.count, nranks), salt));
      std::vector<char> recv(recvElements(a.kind, a.count, nranks) * datatypeSize(a.datatype), 0x5a);
      a.send = inputs[static_cast<std::size_t>(rank)].data();
      a.recv = recv.data();
      CollectiveTask task(*ep, a, kTransportCost);
      if (Status st = runOne(task); !st.ok()) {
        ADD_FAILURE() << st.message;
        return 1000;
      }
      if (holdsResult(a, rank) && recv != expected(a, nranks, rank, inputs)) {
        ADD_FAILURE() << "rank " << rank << ": wrong result of " << task.describe();
        ++bad;
      }
    }
    return bad;
  });
  int total = 0;
  for (int w : wrong) total += w;
  return total;
}

TEST(Transport, EveryCollectiveTypeAndOperatorOnTwoRanks) {
  // 128-byte chunks: every call takes several steps, and the last one is partial.
  EXPECT_EQ(runAndCheck(2, 128, everyCall(77, 2)), 0);
}

TEST(Transport, EveryCollectiveTypeAndOperatorOnFourRanks) {
  EXPECT_EQ(runAndCheck(4, 256, everyCall(45, 4)), 0);
}

TEST(Transport, ThreeRanksWithTheDefaultGeometry) {
  EXPECT_EQ(runAndCheck(3, 0, everyCall(1000, 3)), 0);
}

// Steps of 64 KiB and more are reduced slice by slice (each rank one slice, then everyone
// gathers): 70001 elements make split steps for every type, uneven slices over 3 ranks, and
// for 8-byte types a second, smaller step that is not split.
TEST(Transport, LargeAllReduceStepsAreReducedSliceBySlice) {
  std::vector<CollectiveArgs> calls;
  for (ncclDataType_t type : kAllTypes) {
    for (RedOp op : kAllOps) {
      CollectiveArgs a;
      a.datatype = type;
      a.op = op;
      a.count = 70001;
      calls.push_back(a);
    }
  }
  EXPECT_EQ(runAndCheck(3, 0, calls), 0);
}

TEST(Transport, OneRankIsALocalCopy) {
  EXPECT_EQ(runAndCheck(1, 0, everyCall(100, 1)), 0);
}

TEST(Transport, PreMulSumScalesEachRanksInputByItsOwnScalar) {
  const CommKey key = randomCommKey();
  const auto results = onThreads<std::vector<float>>(3, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    EXPECT_TRUE(join(key, 3, rank, 64, &ep).ok());
    std::vector<float> send(40, static_cast<float>(rank + 1)), recv(40);
    CollectiveArgs a;
    a.kind = CollKind::AllReduce;
    a.count = send.size();
    a.premul = true;
    const float scalar = rank == 1 ? 0.5f : 2.0f;
    std::memcpy(a.scalar_value.data(), &scalar, sizeof(scalar));
    a.send = send.data();
    a.recv = recv.data();
    CollectiveTask task(*ep, a, kTransportCost);
    EXPECT_TRUE(runOne(task).ok());
    return recv;
  });
  for (const auto& r : results) EXPECT_EQ(r, std::vector<float>(40, 1 * 2.0f + 2 * 0.5f + 3 * 2.0f));
}

TEST(Transport, InPlaceCollectives) {
  constexpr int kRanks = 3;
  constexpr std::size_t kCount = 50;
  const CommKey key = randomCommKey();
  const auto ok = onThreads<bool>(kRanks, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    if (!join(key, kRanks, rank, 64, &ep).ok()) return false;
    // All-reduce in place.
    std::vector<std::int32_t> buf(kCount, rank + 1);
    CollectiveArgs a;
    a.kind = CollKind::AllReduce;
    a.datatype = ncclInt32;
    a.count = kCount;
    a.send = buf.data();
    a.recv = buf.data();
    CollectiveTask ar(*ep, a, kTransportCost);
    if (!runOne(ar).ok() || buf != std::vector<std::int32_t>(kCount, 6)) return false;
    // All-gather in place: send = recv + rank * count.
    std::vector<std::int32_t> gathered(kCount * kRanks, -1);
    std::fill_n(gathered.begin() + rank * static_cast<long>(kCount), kCount, rank * 10);
    a.kind = CollKind::AllGather;
    a.send = gathered.data() + rank * kCount;
    a.recv = gathered.data();
    CollectiveTask ag(*ep, a, kTransportCost);
    if (!runOne(ag).ok()) return false;
    for (int q = 0; q < kRanks; ++q) {
      if (!std::all_of(gathered.begin() + q * static_cast<long>(kCount), gathered.begin() + (q + 1) * static_cast<long>(kCount),
                       [&](std::int32_t v) { return v == q * 10; })) return false;
    }
    // Reduce-scatter in place: recv = send + rank * count.
    std::vector<std::int32_t> scattered(kCount * kRanks);
    for (std::size_t i = 0; i < scattered.size(); ++i) scattered[i] = static_cast<std::int32_t>(i) + rank;
    a.kind = CollKind::ReduceScatter;
    a.send = scattered.data();
    a.recv = scattered.data() + rank * kCount;
    CollectiveTask rs(*ep, a, kTransportCost);
    if (!runOne(rs).ok()) return false;
    for (std::size_t i = 0; i < kCount; ++i) {
      const std::size_t global = rank * kCount + i;
      if (scattered[global] != static_cast<std::int32_t>(3 * global + 3)) return false;
    }
    return true;
  });
  for (bool b : ok) EXPECT_TRUE(b);
}

// The tuner's invariant: however elements are bucketed into calls (and however the engine
// chunks them), every element comes out with the same bits.
TEST(Transport, BucketingNeverChangesABit) {
  constexpr int kRanks = 4;
  constexpr std::size_t kCount = 5000;
  std::vector<std::vector<std::size_t>> bucketings = {{kCount}, {1, 999, 4000}, {}};
  std::mt19937 rng(3);
  for (std::size_t done = 0; done < kCount;) {
    const std::size_t n = std::min<std::size_t>(kCount - done, 1 + rng() % 700);
    bucketings[2].push_back(n);
    done += n;
  }
  std::vector<std::vector<char>> results;
  for (std::size_t chunk : {std::size_t{0}, std::size_t{192}}) {
    for (const auto& buckets : bucketings) {
      const CommKey key = randomCommKey();
      const auto outs = onThreads<std::vector<char>>(kRanks, [&](int rank) {
        std::unique_ptr<Endpoint> ep;
        EXPECT_TRUE(join(key, kRanks, rank, chunk, &ep).ok());
        std::vector<char> send = inputOf(ncclBfloat16, rank, kCount), recv(send.size());
        std::size_t offset = 0;
        for (std::size_t n : buckets) {
          CollectiveArgs a;
          a.datatype = ncclBfloat16;
          a.count = n;
          a.send = send.data() + offset * 2;
          a.recv = recv.data() + offset * 2;
          CollectiveTask task(*ep, a, kTransportCost);
          EXPECT_TRUE(runOne(task).ok());
          offset += n;
        }
        return recv;
      });
      for (const auto& o : outs) EXPECT_EQ(o, outs.front()) << "ranks disagree";
      results.push_back(outs.front());
    }
  }
  for (const auto& r : results) EXPECT_EQ(r, results.front());
}

TEST(Transport, MismatchedCountFailsOnEveryRankNamingTheRanks) {
  const CommKey key = randomCommKey();
  const auto statuses = onThreads<Status>(3, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    EXPECT_TRUE(join(key, 3, rank, 0, &ep).ok());
    std::vector<float> buf(64);
    CollectiveArgs a;
    a.count = rank == 1 ? 64 : 32;
    a.send = buf.data();
    a.recv = buf.data();
    CollectiveTask task(*ep, a, kTransportCost);
    return runOne(task);
  });
  for (const Status& st : statuses) {
    EXPECT_EQ(st.code, ncclInvalidUsage);
    EXPECT_NE(st.message.find("rank(s) 0, 2 called AllReduce(count=32, float32, sum)"), std::string::npos) << st.message;
    EXPECT_NE(st.message.find("rank(s) 1 called AllReduce(count=64, float32, sum)"), std::string::npos) << st.message;
  }
}

TEST(Transport, MismatchedOperatorTypeOrRootFails) {
  struct Case {
    CollKind kind;
    RedOp op1;
    ncclDataType_t type1;
    int root1;
    const char* expect;
  };
  const Case cases[] = {{CollKind::AllReduce, RedOp::Max, ncclFloat32, -1, "max"},
                        {CollKind::AllReduce, RedOp::Sum, ncclFloat16, -1, "float16"},
                        {CollKind::Broadcast, RedOp::Sum, ncclFloat32, 1, "root=1"}};
  for (const Case& c : cases) {
    const CommKey key = randomCommKey();
    const auto statuses = onThreads<Status>(2, [&](int rank) {
      std::unique_ptr<Endpoint> ep;
      EXPECT_TRUE(join(key, 2, rank, 0, &ep).ok());
      std::vector<double> buf(16);
      CollectiveArgs a;
      a.kind = c.kind;
      a.count = 8;
      a.root = 0;
      a.send = buf.data();
      a.recv = buf.data();
      if (rank == 1) {
        a.op = c.op1;
        a.datatype = c.type1;
        a.root = c.root1 >= 0 ? c.root1 : 0;
      }
      CollectiveTask task(*ep, a, kTransportCost);
      return runOne(task);
    });
    for (const Status& st : statuses) {
      EXPECT_EQ(st.code, ncclInvalidUsage);
      EXPECT_NE(st.message.find(c.expect), std::string::npos) << st.message;
    }
  }
}

TEST(Transport, DifferentCollectivesFailToo) {
  const CommKey key = randomCommKey();
  const auto statuses = onThreads<Status>(2, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    EXPECT_TRUE(join(key, 2, rank, 0, &ep).ok());
    std::vector<float> buf(64);
    CollectiveArgs a;
    a.kind = rank == 0 ? CollKind::AllReduce : CollKind::AllGather;
    a.count = 8;
    a.send = buf.data();
    a.recv = buf.data();
    CollectiveTask task(*ep, a, kTransportCost);
    return runOne(task);
  });
  for (const Status& st : statuses) {
    EXPECT_EQ(st.code, ncclInvalidUsage);
    EXPECT_NE(st.message.find("AllGather(sendcount=8, float32)"), std::string::npos) << st.message;
  }
}

// Every rank sends to the next and receives from the previous, with sends listed first on
// even ranks and receives first on odd ones: the group never deadlocks.
TEST(Transport, SendRecvRingInOneGroupInAnyOrder) {
  constexpr int kRanks = 4;
  constexpr std::size_t kCount = 3000;  // many 256-byte chunks through 2-slot queues
  const CommKey key = randomCommKey();
  const auto ok = onThreads<bool>(kRanks, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    if (!join(key, kRanks, rank, 256, &ep).ok()) return false;
    for (int round = 0; round < 3; ++round) {
      std::vector<char> send = inputOf(ncclFloat64, rank, kCount, round), recv(send.size());
      P2pArgs s{true, (rank + 1) % kRanks, send.data(), nullptr, kCount, ncclFloat64, 0};
      P2pArgs r{false, (rank + kRanks - 1) % kRanks, nullptr, recv.data(), kCount, ncclFloat64, 0};
      P2pTask send_task(*ep, s, kTransportCost), recv_task(*ep, r, kTransportCost);
      std::vector<Task*> tasks = rank % 2 == 0 ? std::vector<Task*>{&send_task, &recv_task}
                                               : std::vector<Task*>{&recv_task, &send_task};
      if (Status st = runTasks(tasks); !st.ok()) {
        ADD_FAILURE() << st.message;
        return false;
      }
      if (recv != inputOf(ncclFloat64, (rank + kRanks - 1) % kRanks, kCount, round)) return false;
    }
    return true;
  });
  for (bool b : ok) EXPECT_TRUE(b);
}

TEST(Transport, MessagesBetweenAPairArriveInOrderIncludingEmptyAndSelf) {
  const CommKey key = randomCommKey();
  const auto ok = onThreads<bool>(2, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    if (!join(key, 2, rank, 128, &ep).ok()) return false;
    const int peer = 1 - rank;
    std::vector<std::int32_t> a(100, rank * 7), b(3, rank * 9), self(10, 42);
    std::vector<std::int32_t> ra(100), rb(3), rself(10);
    // In call order: three sends and three receives between the pair, and a message to itself.
    TaskGroup group;
    group.addP2p(*ep, P2pArgs{true, peer, a.data(), nullptr, a.size(), ncclInt32, 0}, kTransportCost);
    group.addP2p(*ep, P2pArgs{true, peer, nullptr, nullptr, 0, ncclInt32, 0}, kTransportCost);
    group.addP2p(*ep, P2pArgs{true, peer, b.data(), nullptr, b.size(), ncclInt32, 0}, kTransportCost);
    group.addP2p(*ep, P2pArgs{false, peer, nullptr, ra.data(), ra.size(), ncclInt32, 0}, kTransportCost);
    group.addP2p(*ep, P2pArgs{false, peer, nullptr, nullptr, 0, ncclInt32, 0}, kTransportCost);
    group.addP2p(*ep, P2pArgs{false, peer, nullptr, rb.data(), rb.size(), ncclInt32, 0}, kTransportCost);
    group.addP2p(*ep, P2pArgs{true, rank, self.data(), nullptr, self.size(), ncclInt32, 0}, kTransportCost);
    group.addP2p(*ep, P2pArgs{false, rank, nullptr, rself.data(), rself.size(), ncclInt32, 0}, kTransportCost);
    if (Status st = group.run(); !st.ok()) {
      ADD_FAILURE() << st.message;
      return false;
    }
    return ra == std::vector<std::int32_t>(100, peer * 7) && rb == std::vector<std::int32_t>(3, peer * 9) && rself == self;
  });
  for (bool b : ok) EXPECT_TRUE(b);
}

TEST(Transport, MismatchedSendRecvFailsOnBothSides) {
  const CommKey key = randomCommKey();
  const auto statuses = onThreads<Status>(2, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    EXPECT_TRUE(join(key, 2, rank, 0, &ep).ok());
    std::vector<float> buf(64);
    P2pArgs args = rank == 0 ? P2pArgs{true, 1, buf.data(), nullptr, 64, ncclFloat32, 0}
                             : P2pArgs{false, 0, nullptr, buf.data(), 32, ncclFloat32, 0};
    P2pTask task(*ep, args, kTransportCost);
    return runOne(task);
  });
  for (const Status& st : statuses) {
    EXPECT_EQ(st.code, ncclInvalidUsage);
    EXPECT_NE(st.message.find("rank 0 sent message #0 to rank 1 as count=64 float32"), std::string::npos) << st.message;
  }
}

TEST(Transport, APeerThatNeverArrivesTimesOut) {
  const CommKey key = randomCommKey();
  const auto statuses = onThreads<Status>(2, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    EXPECT_TRUE(join(key, 2, rank, 0, &ep, 300'000'000).ok());
    if (rank == 1) {
      // Rank 1 skips the collective but stays in the communicator until rank 0 gave up.
      while (ep->abortStatus().ok()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return Status::success();
    }
    std::vector<float> buf(8);
    CollectiveArgs a;
    a.count = 8;
    a.send = buf.data();
    a.recv = buf.data();
    CollectiveTask task(*ep, a, kTransportCost);
    return runOne(task);
  });
  EXPECT_EQ(statuses[0].code, ncclRemoteError);
  EXPECT_NE(statuses[0].message.find("waiting for rank(s) 1"), std::string::npos) << statuses[0].message;
  EXPECT_NE(statuses[0].message.find("SIMGPU_NCCL_TIMEOUT_S"), std::string::npos) << statuses[0].message;
}

TEST(Transport, APeerThatLeftFailsTheWaiterAtOnce) {
  const CommKey key = randomCommKey();
  const auto statuses = onThreads<Status>(2, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    EXPECT_TRUE(join(key, 2, rank, 0, &ep).ok());
    if (rank == 1) {
      ep.reset();  // destroys its communicator without taking part
      return Status::success();
    }
    std::vector<float> buf(8);
    P2pTask task(*ep, P2pArgs{false, 1, nullptr, buf.data(), 8, ncclFloat32, 0}, kTransportCost);
    return runOne(task);
  });
  EXPECT_EQ(statuses[0].code, ncclRemoteError);
  EXPECT_NE(statuses[0].message.find("rank 1 left the communicator"), std::string::npos) << statuses[0].message;
}

TEST(Transport, LocalAbortStopsAWaitingOperation) {
  const CommKey key = randomCommKey();
  std::unique_ptr<Endpoint> eps[2];
  onThreads<int>(2, [&](int rank) { return join(key, 2, rank, 0, &eps[rank]).ok() ? 0 : 1; });
  std::vector<float> buf(8);
  Status result;
  std::thread waiter([&] {
    P2pTask task(*eps[0], P2pArgs{false, 1, nullptr, buf.data(), 8, ncclFloat32, 0}, kTransportCost);
    result = runOne(task);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  eps[0]->requestLocalAbort();
  waiter.join();
  EXPECT_EQ(result.code, ncclRemoteError);
  EXPECT_NE(result.message.find("ncclCommAbort"), std::string::npos);
  // The other rank learns about it too.
  EXPECT_FALSE(eps[1]->abortStatus().ok());
}

TEST(Transport, TimingStartsAtTheLastArrivalAndFollowsTheModel) {
  const CommKey key = randomCommKey();
  const auto timings = onThreads<std::vector<TaskTiming>>(2, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    EXPECT_TRUE(join(key, 2, rank, 0, &ep).ok());
    std::vector<float> buf(1000);
    CollectiveArgs a;
    a.count = buf.size();
    a.send = buf.data();
    a.recv = buf.data();
    a.arrival_ns = rank == 0 ? 5000 : 9000;
    CollectiveTask coll(*ep, a, kTransportCost);
    P2pTask p2p(*ep, P2pArgs{rank == 0, 1 - rank, buf.data(), buf.data(), 100, ncclFloat32, rank == 0 ? 100 : 7000}, kTransportCost);
    EXPECT_TRUE(runOne(coll).ok());
    EXPECT_TRUE(runOne(p2p).ok());
    std::vector<TaskTiming> out;
    coll.appendTiming(&out);
    p2p.appendTiming(&out);
    return out;
  });
  const std::int64_t coll_ns = collectiveDurationNs(kTransportCost, CollKind::AllReduce, 4000, std::vector<RankPlace>(2, RankPlace{getpid(), 0}));
  const std::int64_t p2p_ns = p2pDurationNs(kTransportCost, 400, LinkLevel::IntraProcess);
  for (const auto& t : timings) {
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t[0].start_ns, 9000);
    EXPECT_EQ(t[0].duration_ns, coll_ns);
    EXPECT_EQ(t[1].start_ns, 7000);
    EXPECT_EQ(t[1].duration_ns, p2p_ns);
  }
  const std::vector<TaskTiming> group = {{100, 50, -1}, {300, 70, -1}, {200, 10, 2}, {250, 15, 2}, {0, 20, 3}};
  const GroupTiming combined = combineTimings(group);
  EXPECT_EQ(combined.start_ns, 300);
  EXPECT_EQ(combined.duration_ns, 50 + 70 + 25);
}

TEST(Transport, SmallAllGatherForSplit) {
  const CommKey key = randomCommKey();
  const auto outs = onThreads<std::vector<int>>(3, [&](int rank) {
    std::unique_ptr<Endpoint> ep;
    EXPECT_TRUE(join(key, 3, rank, 0, &ep).ok());
    std::vector<int> all(3);
    for (int round = 0; round < 4; ++round) {
      const int mine = rank * 10 + round;
      EXPECT_TRUE(ep->allGatherSmall(&mine, sizeof(mine), all.data()).ok());
      EXPECT_EQ(all, (std::vector<int>{round, 10 + round, 20 + round}));
    }
    return all;
  });
  EXPECT_EQ(outs.size(), 3u);
}

TEST(Transport, JoiningErrors) {
  const CommKey key = randomCommKey();
  std::unique_ptr<Endpoint> first, dup, wrong_size;
  const RankIdentity self{0, 0, getpid()};
  ASSERT_TRUE(Endpoint::attach(key, 2, 0, self, makeGeometry(2, 0), 1'000'000'000, &first).ok());
  const Status taken = Endpoint::attach(key, 2, 0, {1, 0, getpid()}, makeGeometry(2, 0), 1'000'000'000, &dup);
  EXPECT_EQ(taken.code, ncclInvalidUsage);
  EXPECT_NE(taken.message.find("already taken"), std::string::npos) << taken.message;
  const Status size = Endpoint::attach(key, 3, 1, {1, 0, getpid()}, makeGeometry(3, 0), 1'000'000'000, &wrong_size);
  EXPECT_EQ(size.code, ncclInvalidUsage);
  EXPECT_NE(size.message.find("same nranks"), std::string::npos) << size.message;
  // Two ranks on one device of one process.
  std::unique_ptr<Endpoint> second;
  ASSERT_TRUE(Endpoint::attach(key, 2, 1, self, makeGeometry(2, 0), 1'000'000'000, &second).ok());
  const Status duplicate = first->awaitAllRanks();
  EXPECT_EQ(duplicate.code, ncclInvalidUsage);
  EXPECT_NE(duplicate.message.find("duplicate GPU"), std::string::npos) << duplicate.message;
}

TEST(Transport, JoiningTimesOutWhenARankNeverComes) {
  std::unique_ptr<Endpoint> ep;
  ASSERT_TRUE(Endpoint::attach(randomCommKey(), 3, 0, {0, 0, getpid()}, makeGeometry(3, 0), 200'000'000, &ep).ok());
  const Status st = ep->awaitAllRanks();
  EXPECT_EQ(st.code, ncclRemoteError);
  EXPECT_NE(st.message.find("waiting for rank(s) 1, 2"), std::string::npos) << st.message;
}

}  // namespace
}  // namespace simgpu::nccl
