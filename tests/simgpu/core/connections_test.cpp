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

TEST(Connections, AStreamSharingAWorkQueueWaitsForTheOpAheadOfItThere) {
  ASSERT_TRUE(kTwoConnections);
  ASSERT_EQ(initialize(), cudaSuccess);
  // Made one after another, streams go to the two connections in turn: first and third share one.
  cudaStream_t first = nullptr, second = nullptr, third = nullptr;
  ASSERT_EQ(createStream(0, cudaStreamNonBlocking, 0, &first), cudaSuccess);
  ASSERT_EQ(createStream(0, cudaStreamNonBlocking, 0, &second), cudaSuccess);
  ASSERT_EQ(createStream(0, cudaStreamNonBlocking, 0, &third), cudaSuccess);
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

}  // namespace
}  // namespace simgpu
