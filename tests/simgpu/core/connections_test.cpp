// CUDA_DEVICE_MAX_CONNECTIONS: streams dealt to one hardware work queue share its FIFO, so an op
// leaves it only after the op enqueued on it before, whatever stream that is on (the false
// dependency that makes CUDA_DEVICE_MAX_CONNECTIONS=1 hold a training step's kernels behind its
// communication). This process runs with two connections, set before its first CUDA call.
#include "op_recorder.hpp"

#include <simgpu/core/runtime.hpp>
#include <simgpu/core/stream_op.hpp>
#include <simgpu/core/streams.hpp>

#include <gtest/gtest.h>

#include <cstdlib>

namespace simgpu {
namespace {

using testing::Gate;
using testing::kMs;
using testing::OpRecorder;
using testing::timedOp;

// Before main, hence before the machine is made: CUDA reads the variable when it makes a context.
const bool kTwoConnections = setenv("CUDA_DEVICE_MAX_CONNECTIONS", "2", 1) == 0;

// Three streams made one after another on the machine with two connections: they go to the
// connections in turn, so the first and the third share one, whatever the connection of the first.
struct ThreeStreams {
  cudaStream_t first = nullptr, second = nullptr, third = nullptr;
};
::testing::AssertionResult makeThreeStreams(ThreeStreams& out) {
  if (!kTwoConnections) return ::testing::AssertionFailure() << "CUDA_DEVICE_MAX_CONNECTIONS could not be set";
  if (initialize() != cudaSuccess) return ::testing::AssertionFailure() << "simgpu did not initialise";
  for (cudaStream_t* s : {&out.first, &out.second, &out.third}) {
    if (createStream(0, cudaStreamNonBlocking, 0, s) != cudaSuccess) return ::testing::AssertionFailure() << "no stream";
  }
  return ::testing::AssertionSuccess();
}

TEST(Connections, AStreamSharingAWorkQueueWaitsForTheOpAheadOfItThere) {
  ThreeStreams streams;
  ASSERT_TRUE(makeThreeStreams(streams));
  const auto [first, second, third] = streams;  // first and third share a connection
  OpRecorder recorder;
  Gate gate;
  ASSERT_EQ(enqueue(first, gate.op()), cudaSuccess);
  ASSERT_EQ(enqueue(first, timedOp("long", WorkClass::Copy, 20 * kMs)), cudaSuccess);
  // Queued behind "long" on its stream: it leaves the work queue when "long" ends.
  ASSERT_EQ(enqueue(first, timedOp("next", WorkClass::Copy, 1 * kMs)), cudaSuccess);
  // Nothing orders these after the first stream's work but the queues they are in.
  ASSERT_EQ(enqueue(third, timedOp("behind", WorkClass::Copy, 1 * kMs)), cudaSuccess);
  ASSERT_EQ(enqueue(second, timedOp("beside", WorkClass::Copy, 1 * kMs)), cudaSuccess);
  gate.open();
  ASSERT_EQ(synchronizeDevice(0), cudaSuccess);
  const auto long_op = recorder.byName("long");
  const auto next = recorder.byName("next");
  const auto behind = recorder.byName("behind");
  const auto beside = recorder.byName("beside");
  EXPECT_EQ(next.start_ns, long_op.end_ns);
  EXPECT_EQ(behind.start_ns, long_op.end_ns);  // the false dependency
  EXPECT_LT(beside.end_ns, long_op.end_ns);    // its own queue: it ran beside "long"
  for (cudaStream_t s : {first, second, third}) EXPECT_EQ(destroyStream(s), cudaSuccess);
}

// An op queued on a stream behind a wait for a collective cannot leave its work queue before
// that collective ends, and neither can what is queued behind it on the queue. So the
// collective's end need not wait for that op's stream: nothing there can start in time to
// interfere with it. Without that bound, a collective's end waited the bound wait's limit (1 s
// of real time) at each such point, in every step of a data-parallel job under
// CUDA_DEVICE_MAX_CONNECTIONS=1.
TEST(Connections, AnOpQueuedBehindAWaitForACollectiveDoesNotHoldUpTheCollectivesEnd) {
  ThreeStreams streams;
  ASSERT_TRUE(makeThreeStreams(streams));
  const auto [waiting, comm, compute] = streams;  // `waiting` and `compute` share a connection
  cudaEvent_t reduced = nullptr;
  ASSERT_EQ(createEvent(0, 0, &reduced), cudaSuccess);
  OpRecorder recorder;
  const std::uint64_t expired_before = stats().bound_waits_expired;
  ASSERT_EQ(enqueue(comm, timedOp("allreduce", WorkClass::Communication, 20 * kMs)), cudaSuccess);
  ASSERT_EQ(recordEvent(reduced, comm), cudaSuccess);
  ASSERT_EQ(streamWaitEvent(waiting, reduced), cudaSuccess);
  ASSERT_EQ(enqueue(waiting, timedOp("after the wait", WorkClass::Copy, 1 * kMs)), cudaSuccess);
  // Behind "after the wait" on their shared queue: it leaves the queue after the all-reduce.
  ASSERT_EQ(enqueue(compute, timedOp("kernel", WorkClass::Compute, 5 * kMs)), cudaSuccess);
  const TimeNs begun = nowNs();
  ASSERT_EQ(synchronizeDevice(0), cudaSuccess);
  const TimeNs waited = nowNs() - begun;
  const auto allreduce = recorder.byName("allreduce");
  const auto kernel = recorder.byName("kernel");
  EXPECT_EQ(allreduce.duration(), 20 * kMs) << "nothing overlapped it";
  EXPECT_GE(kernel.start_ns, allreduce.end_ns);
  EXPECT_EQ(stats().bound_waits_expired - expired_before, 0u);
  EXPECT_LT(waited, 900 * kMs) << "the all-reduce's end waited for the kernel's stream";
  EXPECT_EQ(destroyEvent(reduced), cudaSuccess);
  for (cudaStream_t s : {waiting, comm, compute}) EXPECT_EQ(destroyStream(s), cudaSuccess);
}

}  // namespace
}  // namespace simgpu
