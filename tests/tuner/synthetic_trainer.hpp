// Recorded runs of a described data-parallel trainer, with times known exactly: the trainer's
// calls are run on the tuner's simulator and written down as the collector would have
// recorded them (API calls, ops, collectives, host syncs, step markers, pointer arguments).
//
// Each rank, per iteration, on its compute stream S:
//   forward: one kernel per layer (reads the layer's parameters)
//   naive and overlap: a memset of all gradients, then backward: one kernel per layer, last
//   layer first, writing that layer's gradient, with
//     naive:   an in-place all-reduce per layer, layer 0 first, on S
//     overlap: after each layer's backward kernel, an event on S that a communication stream C
//              waits for, then that layer's all-reduce on C; the updates wait for C's last
//   then an update kernel per layer (reads and writes the layer's parameters, reads its gradient)
//   zero1, ZeRO-1 as Megatron's distributed optimizer lays it out: each layer's parameters and
//   its gradients are a flat bucket of layer_floats elements, of which each rank owns a shard
//   of layer_floats / ranks; buckets go in the order backward fills them, the last layer's
//   first. All on S: backward (no memset: each kernel writes its bucket whole), then per bucket
//   an in-place reduce-scatter (the rank's shard of the sum lands in its own slice), per bucket
//   an update kernel of the shard (reads the gradient shard, writes the parameter shard), per
//   bucket an in-place all-gather (from the parameter shard into the whole bucket); the next
//   forward reads the buckets first layer first
//   zero1_overlapped: zero1 with each layer's reduce-scatter on C as soon as its backward kernel
//   ends (an event on S that C waits for), and S waiting for C's last before the updates
//   zero1_gather_in_forward: zero1_overlapped with the all-gathers where Megatron-LM's
//   --overlap-param-gather issues them, in the next iteration's forward: after an event on S
//   that C waits for, each layer's all-gather on C, first layer first, each followed by an
//   event that S waits for just before that layer's forward (the first iteration gathers none)
//   zero1_synchronous: zero1 as PyTorch's synchronous collectives (async_op=False) issue it:
//   each reduce-scatter and all-gather on the process group's stream C, after an event on S that
//   C waits for, and S waiting at once for an event recorded on C after it
//   an event at the end of the iteration; from the second iteration on, the host then waits
//   for the previous iteration's event (the host runs one iteration ahead)
// Before the first iteration a broadcast of the parameters, and a stream sync.
#pragma once

#include <cstdint>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/tuner/op_pointers.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace syncopate::tuner::testing {

struct SyntheticTrainer {
  int ranks = 4;
  int layers = 4;
  int iterations = 7;
  enum class Mode : std::uint8_t { Naive, Overlap, Zero1, Zero1Overlapped, Zero1Synchronous, Zero1GatherInForward };
  Mode mode = Mode::Naive;
  double forward_ns = 100'000;
  double backward_ns = 200'000;
  double update_ns = 20'000;
  double memset_ns = 5'000;            // naive and overlap (zero1 zeroes no gradients)
  std::uint64_t layer_floats = 1 << 20;  // zero1: a multiple of ranks
  double latency_ns = 0;              // per ring step
  double ns_per_byte = 0.0;           // per bus byte
  double call_ns = 1'000;             // host time of every non-blocking call
  double launch_latency_ns = 0;       // after the call, before the op can start
  double compute_slowdown = 0, communication_slowdown = 0;
  std::vector<double> rank_backward_scale;  // per rank (stragglers); empty: all 1
  // A rank whose store lost its set-up broadcast as the recorder loses an op whose GPU time
  // never came (ops_untimed_timing_failed): the call is kept, the op and its collective row are
  // not, and the later collectives keep their sequence numbers. -1: none.
  int lost_broadcast_rank = -1;

  // Per rank time of one layer's all-reduce, of one layer's reduce-scatter (its all-gather
  // takes the same: one ring, n - 1 steps, bus factor (n - 1) / n), and of the set-up broadcast.
  double allReduceNs() const;
  double reduceScatterNs() const;
  double broadcastNs() const;
};

struct SyntheticRun {
  analyzer::RunModel model;
  OpPointers pointers;
};

SyntheticRun makeRun(const SyntheticTrainer& trainer);

// The trainer's run analysed and modelled without interference (a run in line shows no overlap
// to measure it from): what the tests of a framework's settings predict on. Throws where the
// analysis or the model fails.
struct ModelledRun {
  analyzer::Analysis analysis;
  WhatIfModel model;
};
ModelledRun modelRun(const SyntheticTrainer& trainer);

// Addresses the synthetic trainer gives its buffers.
std::uint64_t gradientAddress(int layer, const SyntheticTrainer& t);
std::uint64_t parameterAddress(int layer, const SyntheticTrainer& t);
// zero1: where the rank's shard of a layer's bucket (at `bucket`) begins.
std::uint64_t shardAddress(std::uint64_t bucket, int rank, const SyntheticTrainer& t);

}  // namespace syncopate::tuner::testing
