// Hand-built runs shared by several test files, with their exact answers in the comments.
#pragma once

#include "run_sketch.hpp"

namespace syncopate::analyzer::testing {

// Straggler: one iteration on two ranks. Each rank computes, all-reduces 375000 floats on the
// same stream, then runs an optimizer kernel. Rank 1's compute takes 15us longer, so rank 0's
// all-reduce waits 15us for it.
//   rank 0: compute [5,45]  all-reduce [45,75]  optimizer [75,85]
//   rank 1: compute [5,60]  all-reduce [60,75]  optimizer [75,85]
inline RunModel straggler() {
  RunSketch s;
  const std::int64_t compute_end[2] = {us(45), us(60)};
  for (int r = 0; r < 2; ++r) {
    const Index rank = s.rank(r);
    const Index st = s.stream(rank, 7);
    const Index t = s.thread(rank, 10 + r);
    s.range(rank, t, "ProfilerStep#0", 0, us(100));
    const Index c0 = s.call(t, "cudaLaunchKernel", us(1), us(2));
    const Index c1 = s.call(t, "ncclAllReduce", us(2), us(3));
    const Index c2 = s.call(t, "cudaLaunchKernel", us(3), us(4));
    s.kernel(st, "compute", us(5), compute_end[r], c0);
    s.allReduce(st, 11, r, 2, 0, compute_end[r], us(75), 375000, c1);
    s.kernel(st, "optimizer", us(75), us(85), c2);
  }
  return s.build();
}

// Host sync: kernel0 [5,50] is awaited by cudaStreamSynchronize [2,51]; kernel1 is launched at
// 52 and runs [55,60].
inline RunModel hostSync() {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index st = s.stream(rank, 7);
  const Index t = s.thread(rank, 1);
  s.range(rank, t, "ProfilerStep#0", 0, us(100));
  const Index c0 = s.call(t, "cudaLaunchKernel", us(0), us(1));
  const Index c1 = s.call(t, "cudaStreamSynchronize", us(2), us(51));
  const Index c2 = s.call(t, "cudaLaunchKernel", us(52), us(53));
  s.kernel(st, "k0", us(5), us(50), c0);
  s.hostSync(rank, c1, trace::SyncKind::Stream, st, us(2), us(51));
  s.kernel(st, "k1", us(55), us(60), c2);
  return s.build();
}

// Event dependency: compute [5,35] then an event record; the communication stream waits for the
// event (its wait marker carries time 6) before an op [35,55].
inline RunModel eventWait() {
  RunSketch s;
  const Index rank = s.rank(0);
  const Index compute = s.stream(rank, 7), comm = s.stream(rank, 20);
  const Index t = s.thread(rank, 1);
  s.range(rank, t, "ProfilerStep#0", 0, us(100));
  const Index c0 = s.call(t, "cudaLaunchKernel", us(0), us(1));
  const Index c1 = s.call(t, "cudaEventRecord", us(1), us(2));
  const Index c2 = s.call(t, "cudaStreamWaitEvent", us(2), us(3));
  const Index c3 = s.call(t, "cudaLaunchKernel", us(3), us(4));
  s.kernel(compute, "k1", us(5), us(35), c0);
  s.op(compute, trace::OpKind::EventRecord, "record", us(35), us(35), c1, kUnknown, 7);
  s.op(comm, trace::OpKind::StreamWait, "wait", us(6), us(6), c2, kUnknown, 7);
  s.kernel(comm, "after_wait", us(35), us(55), c3);
  return s.build();
}

}  // namespace syncopate::analyzer::testing
