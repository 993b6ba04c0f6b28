// A small two-rank PyTorch profiler (Kineto) trace, in the shape of the real ones in the shared
// traces folder, for tests that need a trace with exactly known content. tests/fixtures/kineto
// holds its two files, written by this function and checked in.
//
// Rank r (0 or 1 of 2, pid 1000 + r, main thread tid 1000 + r) runs three steps, each a
// ProfilerStep#N range of 1 ms starting at 1000 µs × N on the trace's clock (plus 0.25 µs on
// rank 1, so that timestamps carry fractions of a microsecond). In step N, at o µs:
//   forward:  aten::mm (cpu_op) launching gemm_fwd on stream 7 [o+25, o+225), then a pageable
//             host-to-device copy of 1 MiB [o+225, o+245);
//   backward: aten::mm_backward launching gemm_bwd [o+245, o+545) on rank 0, 30 µs longer on
//             rank 1, then aten::embedding_backward's embedding_bwd (100 µs) right after it;
//   stream 20 waits for an event recorded on stream 7 after gemm_bwd (cudaEventRecord at o+52,
//             cudaStreamWaitEvent at o+55, a Stream Wait Event record);
//   nccl:all_reduce launching an NCCL all-reduce of 262144 floats on stream 20 (the default
//             process group of both ranks) 5 µs after gemm_bwd ends: rank 0's starts at o+550
//             and waits for rank 1's at o+580; both end at o+750, so it overlaps embedding_bwd;
//   cudaStreamSynchronize of stream 20 [o+100, o+751) (a Stream Sync record), then a
//             256-byte memset [o+760, o+762).
// Every launch has its cuda_runtime call and ac2g flow; a [memory] instant event allocates
// the copy's 1 MiB on the device in step 1 and frees it in step 3. The profiler's window (the
// Trace span) runs from 900 µs to 5900 µs, so no step is cut by it. baseTimeNanoseconds is
// 1.7e18.
#pragma once

#include <string>

namespace syncopate::analyzer::testing {

// The trace of `rank` (0 or 1) as JSON text.
std::string kinetoTrace(int rank);

}  // namespace syncopate::analyzer::testing
