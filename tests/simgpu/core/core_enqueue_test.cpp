// The seam (simgpu::enqueue) and the scheduler under it: stream order, model clocks, waits
// across streams, default-stream rules, the compute engine's priorities and interference.
// Model times are exact functions of the profile, so they are compared exactly; real time is
// only bounded below by the model (a worker never finishes before its model end).
#include "op_recorder.hpp"

#include <simgpu/core/profile.hpp>
#include <simgpu/core/runtime.hpp>
#include <simgpu/core/stream_op.hpp>
#include <simgpu/core/streams.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace simgpu {
namespace {

using testing::Gate;
using testing::kMs;
using testing::kUs;
using testing::OpRecorder;
using testing::timedOp;

class EnqueueTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(initialize(), cudaSuccess); }
  void TearDown() override {
    for (cudaStream_t s : streams_) EXPECT_EQ(destroyStream(s), cudaSuccess);
    for (cudaEvent_t e : events_) EXPECT_EQ(destroyEvent(e), cudaSuccess);
    EXPECT_EQ(synchronizeDevice(0), cudaSuccess);
  }
  cudaStream_t stream(unsigned flags = cudaStreamDefault, int priority = 0) {
    cudaStream_t s = nullptr;
    EXPECT_EQ(createStream(0, flags, priority, &s), cudaSuccess);
    streams_.push_back(s);
    return s;
  }
  cudaEvent_t event() {
    cudaEvent_t e = nullptr;
    EXPECT_EQ(createEvent(0, cudaEventDefault, &e), cudaSuccess);
    events_.push_back(e);
    return e;
  }
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> events_;
};

TEST_F(EnqueueTest, OpsOfOneStreamRunInOrderBackToBackInModelTime) {
  OpRecorder recorder;
  cudaStream_t s = stream();
  std::vector<int> order;
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> ran_on_caller{false};
  Gate gate;
  const TimeNs before = nowNs();
  ASSERT_EQ(enqueue(s, gate.op()), cudaSuccess);
  for (int i = 0; i < 5; ++i) {
    StreamOp op = timedOp("step", WorkClass::Copy, 2 * kMs);
    op.body = [&order, &ran_on_caller, caller, i](const OpContext&) {
      order.push_back(i);
      if (std::this_thread::get_id() == caller) ran_on_caller = true;
      OpTiming t;
      t.duration_ns = 2 * kMs;
      return t;
    };
    ASSERT_EQ(enqueue(s, std::move(op)), cudaSuccess);
  }
  gate.open();
  ASSERT_EQ(synchronizeStream(s), cudaSuccess);
  const TimeNs after = nowNs();

  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(ran_on_caller);
  auto ops = recorder.ops();
  ASSERT_EQ(ops.size(), 6u);
  // The gate starts once the launch latency has passed since its enqueue.
  EXPECT_GE(ops[0].start_ns, before + profile().device.launch_latency_ns);
  ops.erase(ops.begin());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i].duration(), 2 * kMs);
    EXPECT_NE(ops[i].correlation_id, 0u);
    if (i > 0) {
      EXPECT_EQ(ops[i].start_ns, ops[i - 1].end_ns) << "op " << i;
    }
  }
  // The host saw completion no earlier than the model end.
  EXPECT_GE(after, ops.back().end_ns);
}

TEST_F(EnqueueTest, InvalidStreamHandleIsRefused) {
  int not_a_stream = 0;
  EXPECT_EQ(enqueue(reinterpret_cast<cudaStream_t>(&not_a_stream), timedOp("x", WorkClass::Copy, kUs)),
            cudaErrorInvalidResourceHandle);
}

TEST_F(EnqueueTest, BodyTimingOverridesStartAndReportsStickyError) {
  OpRecorder recorder;
  cudaStream_t s = stream();
  StreamOp op = timedOp("late-start", WorkClass::Communication, 1 * kMs);
  TimeNs given_start = 0;
  op.body = [&given_start](const OpContext& ctx) {
    given_start = ctx.start_ns;
    OpTiming t;
    t.model_start_ns = ctx.start_ns + 3 * kMs;  // e.g. the last peer arrived later
    t.duration_ns = 1 * kMs;
    return t;
  };
  ASSERT_EQ(enqueue(s, std::move(op)), cudaSuccess);
  ASSERT_EQ(synchronizeStream(s), cudaSuccess);
  const auto rec = recorder.byName("late-start");
  EXPECT_EQ(rec.start_ns, given_start + 3 * kMs);
  EXPECT_EQ(rec.duration(), 1 * kMs);
}

TEST_F(EnqueueTest, WaitEventOrdersStreamsAtTheRecordedModelTime) {
  OpRecorder recorder;
  cudaStream_t a = stream();
  cudaStream_t b = stream();
  cudaEvent_t e = event();
  Gate gate;
  ASSERT_EQ(enqueue(a, gate.op()), cudaSuccess);
  ASSERT_EQ(enqueue(a, timedOp("producer", WorkClass::Copy, 20 * kMs)), cudaSuccess);
  ASSERT_EQ(recordEvent(e, a), cudaSuccess);
  ASSERT_EQ(streamWaitEvent(b, e), cudaSuccess);
  ASSERT_EQ(enqueue(b, timedOp("consumer", WorkClass::Copy, 1 * kMs)), cudaSuccess);
  // A later record must not affect the earlier wait.
  ASSERT_EQ(enqueue(a, timedOp("after", WorkClass::Copy, 30 * kMs)), cudaSuccess);
  ASSERT_EQ(recordEvent(e, a), cudaSuccess);
  gate.open();
  ASSERT_EQ(synchronizeDevice(0), cudaSuccess);
  const auto producer = recorder.byName("producer");
  const auto consumer = recorder.byName("consumer");
  EXPECT_EQ(consumer.start_ns, producer.end_ns);
  EXPECT_LT(consumer.end_ns, recorder.byName("after").end_ns);
}

TEST_F(EnqueueTest, LegacyDefaultStreamSynchronisesWithBlockingStreamsOnly) {
  OpRecorder recorder;
  cudaStream_t blocking = stream(cudaStreamDefault);
  cudaStream_t non_blocking = stream(cudaStreamNonBlocking);
  Gate gate;
  ASSERT_EQ(enqueue(blocking, gate.op("gate-b")), cudaSuccess);
  ASSERT_EQ(enqueue(non_blocking, gate.op("gate-nb")), cudaSuccess);
  ASSERT_EQ(enqueue(blocking, timedOp("blocking", WorkClass::Copy, 10 * kMs)), cudaSuccess);
  ASSERT_EQ(enqueue(non_blocking, timedOp("non-blocking", WorkClass::Copy, 60 * kMs)), cudaSuccess);
  ASSERT_EQ(enqueue(nullptr, timedOp("legacy", WorkClass::Copy, 5 * kMs)), cudaSuccess);
  ASSERT_EQ(enqueue(blocking, timedOp("blocking-after", WorkClass::Copy, 1 * kMs)), cudaSuccess);
  ASSERT_EQ(enqueue(non_blocking, timedOp("non-blocking-after", WorkClass::Copy, 1 * kMs)), cudaSuccess);
  gate.open();
  ASSERT_EQ(synchronizeDevice(0), cudaSuccess);
  const auto legacy = recorder.byName("legacy");
  EXPECT_EQ(legacy.start_ns, recorder.byName("blocking").end_ns);
  EXPECT_LT(legacy.end_ns, recorder.byName("non-blocking").end_ns);
  EXPECT_EQ(recorder.byName("blocking-after").start_ns, legacy.end_ns);
  EXPECT_EQ(recorder.byName("non-blocking-after").start_ns, recorder.byName("non-blocking").end_ns);
}

TEST_F(EnqueueTest, PerThreadDefaultStreamsAreDistinctAndBlockingTowardsLegacy) {
  OpRecorder recorder;
  StreamAttributes mine;
  ASSERT_EQ(streamAttributes(cudaStreamPerThread, &mine), cudaSuccess);
  StreamAttributes theirs;
  Gate gate;
  std::thread other([&] {
    ASSERT_EQ(streamAttributes(cudaStreamPerThread, &theirs), cudaSuccess);
    ASSERT_EQ(enqueue(cudaStreamPerThread, gate.op()), cudaSuccess);
    ASSERT_EQ(enqueue(cudaStreamPerThread, timedOp("other-thread", WorkClass::Copy, 10 * kMs)), cudaSuccess);
  });
  other.join();
  EXPECT_NE(mine.id, theirs.id);
  ASSERT_EQ(enqueue(cudaStreamPerThread, timedOp("this-thread", WorkClass::Copy, 10 * kMs)), cudaSuccess);
  ASSERT_EQ(enqueue(cudaStreamLegacy, timedOp("legacy", WorkClass::Copy, 1 * kMs)), cudaSuccess);
  gate.open();
  ASSERT_EQ(synchronizeDevice(0), cudaSuccess);
  const auto a = recorder.byName("other-thread");
  const auto b = recorder.byName("this-thread");
  EXPECT_LT(b.start_ns, a.start_ns) << "the other thread's stream does not hold this one";
  EXPECT_EQ(recorder.byName("legacy").start_ns, std::max(a.end_ns, b.end_ns));
}

TEST_F(EnqueueTest, ComputeOpsShareOneEngineAndHigherPriorityGoesFirst) {
  OpRecorder recorder;
  cudaStream_t low1 = stream(cudaStreamDefault, kLeastStreamPriority);
  cudaStream_t low2 = stream(cudaStreamDefault, kLeastStreamPriority);
  cudaStream_t high = stream(cudaStreamDefault, kGreatestStreamPriority);
  // A first kernel holds the engine until both others wait for it; the low-priority one asked
  // first, the high-priority one goes first.
  Gate gate;
  ASSERT_EQ(enqueue(low1, gate.op("first", WorkClass::Compute)), cudaSuccess);
  gate.waitEntered();
  ASSERT_EQ(enqueue(low2, timedOp("low", WorkClass::Compute, 5 * kMs)), cudaSuccess);
  while (computeEngineWaiters(0) != 1) std::this_thread::yield();
  ASSERT_EQ(enqueue(high, timedOp("high", WorkClass::Compute, 5 * kMs)), cudaSuccess);
  while (computeEngineWaiters(0) != 2) std::this_thread::yield();
  gate.open();
  ASSERT_EQ(synchronizeDevice(0), cudaSuccess);
  const auto first = recorder.byName("first");
  const auto low = recorder.byName("low");
  const auto hi = recorder.byName("high");
  EXPECT_EQ(hi.start_ns, first.end_ns);
  EXPECT_EQ(low.start_ns, hi.end_ns);
}

TEST_F(EnqueueTest, OverlappingComputeAndCommunicationSlowEachOtherDown) {
  OpRecorder recorder;
  cudaStream_t gate = stream();
  cudaStream_t compute = stream();
  cudaStream_t comm = stream();
  cudaEvent_t go = event();
  Gate held;
  ASSERT_EQ(enqueue(gate, held.op()), cudaSuccess);
  ASSERT_EQ(recordEvent(go, gate), cudaSuccess);
  ASSERT_EQ(streamWaitEvent(compute, go), cudaSuccess);
  ASSERT_EQ(streamWaitEvent(comm, go), cudaSuccess);
  ASSERT_EQ(enqueue(compute, timedOp("gemm", WorkClass::Compute, 20 * kMs)), cudaSuccess);
  ASSERT_EQ(enqueue(comm, timedOp("allreduce", WorkClass::Communication, 20 * kMs)), cudaSuccess);
  held.open();
  ASSERT_EQ(synchronizeDevice(0), cudaSuccess);
  const auto gemm = recorder.byName("gemm");
  const auto ar = recorder.byName("allreduce");
  ASSERT_EQ(gemm.start_ns, ar.start_ns);
  const double cs = profile().interference.compute_slowdown;
  const double ks = profile().interference.communication_slowdown;
  // Both run slowed while they overlap; the compute op (less slowed) ends first, and the rest of
  // the communication runs at full speed.
  const double gemm_ns = 20e6 * (1 + cs);
  const double ar_ns = gemm_ns + (20e6 - gemm_ns / (1 + ks));
  EXPECT_NEAR(static_cast<double>(gemm.duration()), gemm_ns, 2e3);
  EXPECT_NEAR(static_cast<double>(ar.duration()), ar_ns, 2e3);
}

TEST_F(EnqueueTest, DestroyingAStreamLetsItsPendingWorkFinish) {
  OpRecorder recorder;
  cudaStream_t s = nullptr;
  ASSERT_EQ(createStream(0, cudaStreamDefault, 0, &s), cudaSuccess);
  std::atomic<int> ran{0};
  for (int i = 0; i < 3; ++i) {
    StreamOp op = timedOp("pending", WorkClass::Copy, 2 * kMs);
    op.body = [&ran](const OpContext&) {
      ++ran;
      OpTiming t;
      t.duration_ns = 2 * kMs;
      return t;
    };
    ASSERT_EQ(enqueue(s, std::move(op)), cudaSuccess);
  }
  ASSERT_EQ(destroyStream(s), cudaSuccess);
  EXPECT_EQ(enqueue(s, timedOp("late", WorkClass::Copy, kUs)), cudaErrorInvalidResourceHandle);
  ASSERT_EQ(synchronizeDevice(0), cudaSuccess);
  EXPECT_EQ(ran.load(), 3);
}

TEST_F(EnqueueTest, ThrowingBodyBecomesAStickyLaunchFailureUntilReset) {
  cudaStream_t s = nullptr;
  ASSERT_EQ(createStream(0, cudaStreamDefault, 0, &s), cudaSuccess);
  StreamOp op = timedOp("throws", WorkClass::Compute, kUs);
  op.body = [](const OpContext&) -> OpTiming { throw std::runtime_error("CPU implementation failed"); };
  ASSERT_EQ(enqueue(s, std::move(op)), cudaSuccess);
  EXPECT_EQ(synchronizeStream(s), cudaErrorLaunchFailure);
  EXPECT_EQ(enqueue(s, timedOp("after", WorkClass::Compute, kUs)), cudaErrorLaunchFailure);
  EXPECT_EQ(stickyError(0), cudaErrorLaunchFailure);
  ASSERT_EQ(resetDevice(0), cudaSuccess);
  EXPECT_EQ(stickyError(0), cudaSuccess);
  EXPECT_EQ(enqueue(s, timedOp("stale", WorkClass::Compute, kUs)), cudaErrorInvalidResourceHandle)
      << "reset destroys the device's streams";
  EXPECT_EQ(enqueue(nullptr, timedOp("fresh", WorkClass::Compute, kUs)), cudaSuccess);
}

TEST_F(EnqueueTest, ResetAbandonsPendingWorkPromptly) {
  OpRecorder recorder;
  cudaStream_t s = nullptr;
  ASSERT_EQ(createStream(0, cudaStreamDefault, 0, &s), cudaSuccess);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(enqueue(s, timedOp("long", WorkClass::Compute, 1000 * kMs)), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const TimeNs before = nowNs();
  ASSERT_EQ(resetDevice(0), cudaSuccess);
  EXPECT_LT(nowNs() - before, 500 * kMs);
  const auto ops = recorder.ops();
  ASSERT_EQ(ops.size(), 10u);
  EXPECT_LT(ops[0].end_ns, ops[0].start_ns + 1000 * kMs) << "the running op was cut short";
  for (std::size_t i = 1; i < ops.size(); ++i) EXPECT_TRUE(ops[i].abandoned);
  EXPECT_FALSE(shuttingDown(0));
}

TEST(EnqueueExit, ExitWithPendingWorkDoesNotHang) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        cudaStream_t s = nullptr;
        if (createStream(0, cudaStreamDefault, 0, &s) != cudaSuccess) std::exit(2);
        for (int i = 0; i < 5; ++i) enqueue(s, timedOp("forever", WorkClass::Compute, 100'000 * kMs));
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(EnqueueExit, ABodyThatNeverReturnsIsLeftBehindAtExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        StreamOp stuck = timedOp("stuck", WorkClass::Communication, kMs);
        stuck.body = [](const OpContext&) -> OpTiming {
          for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // ignores shuttingDown()
        };
        if (enqueue(nullptr, std::move(stuck)) != cudaSuccess) std::exit(2);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "simgpu: device 0: an op did not return within 5 s of process exit");
}

}  // namespace
}  // namespace simgpu
