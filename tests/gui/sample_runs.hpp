// Hand-built runs with exactly known content for the GUI tests, described through the
// analyzer's RunModelBuilder (the same path the store loader takes).
//
// twoRankRun(): ranks 0 and 1 on hosts node-a and node-b; each has thread "main" (tid 100+r),
// a compute stream (handle 7) and an NCCL stream (handle 8). Times in µs:
//   NVTX on main:  ProfilerStep#1 [0,100)  (with "forward" [0,40) inside), ProfilerStep#2 [100,200)
//   step k (k = 0, 1; o = 100k):
//     cudaLaunchKernel  [o+1, o+3)   -> gemm on compute        [o+5, o+45)
//     ncclAllReduce     [o+46, o+48) -> AllReduce on nccl      rank 0 [o+50, o+90), rank 1 [o+60, o+90)
//   rank 0 only: overlap_a [150,170) and overlap_b [160,180) on compute (they overlap: two lanes)
//   rank 1 only: Memcpy HtoD [150,160) on compute, 4096 bytes
//   rank 1: cudaStreamSynchronize [160,175) on main, blocking on the nccl stream [161,175)
// Rank 1 arrives 10 µs late at both all-reduces (communicator 42, sequence 0 and 1).
#pragma once

#include <memory>
#include <string>

#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/gui/model/loaded_run.hpp"
#include "syncopate/gui/model/workers.hpp"

namespace syncopate::gui::testing {

constexpr std::int64_t us(std::int64_t v) { return v * 1000; }

analyzer::RunModel twoRankRun(std::int64_t shift_ns = 0);

// `n` kernels of `width` ns every `period` ns from `start` on one stream of one rank, inside one
// ProfilerStep#1 range on its thread "main" (lanes: the thread's NVTX lane, then the stream).
analyzer::RunModel denseRun(std::size_t n, std::int64_t width, std::int64_t period, std::int64_t start = 0);

// Four iterations on two ranks: ProfilerStep#1..4 on each rank's thread "main", one 10 µs kernel
// "step" per iteration on its stream, starting (µs) at rank 0: 0, 100, 250, 400 and rank 1:
// 0, 100, 200, 400. Iteration windows: rank 0 100, 150, 150, 10; rank 1 100, 100, 200, 10.
analyzer::RunModel fourIterationRun();

// prepareRun of a model, failing the test's QVERIFY-style check through the returned pointer.
std::shared_ptr<const LoadedRun> prepared(analyzer::RunModel model, std::uint32_t run = 0, std::string label = "run");

// A source that "loads" twoRankRun(shift) from memory, for the loader and window tests.
RunSource memorySource(std::string label, std::int64_t shift = 0);

}  // namespace syncopate::gui::testing
