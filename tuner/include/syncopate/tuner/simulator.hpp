// A discrete-event simulator of a multi-rank step: per rank, a host thread that issues work
// and blocks on syncs, and GPU streams that run it. It is what the what-if model runs a
// schedule on; its rules are those the model assumes of a GPU (docs/tuner.md, "The model"):
//   - a stream runs its ops in issue order; an op starts once issued (+ launch latency), once
//     the previous op of its stream and every op it waits for (events) have ended;
//   - compute ops of one device run one at a time (a saturating kernel fills the GPU), the
//     waiting one on the highest-priority stream first, then first come;
//   - a collective starts on every rank when the last rank's op can start, and takes its
//     modelled time from there; an op never starts before its `not_before_ns`;
//   - while compute and communication run together on a device, compute progresses at
//     1/(1+compute_slowdown*w) and communication at 1/(1+communication_slowdown) of its speed,
//     w the largest interference weight of the communication running (its channels relative
//     to those the slowdown was measured with; 1 for a collective as recorded);
//   - copies and event markers neither use the compute engine nor interfere;
//   - with `connections` set (CUDA_DEVICE_MAX_CONNECTIONS), a rank's streams are dealt in turn
//     to that many hardware work queues, each a FIFO in issue order: an op leaves its queue
//     (starts, waits for the engine or for its collective's peers) only after every op issued
//     to that queue before it has left it, whatever stream that op is on.
// Hosts: a rank's host advances through its steps (CPU time, issuing an op, waiting for an op
// to end, meeting every other rank at a barrier).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "syncopate/trace/types.hpp"

namespace syncopate::tuner {

using trace::OpClass;

inline constexpr std::uint32_t kNoMatch = std::numeric_limits<std::uint32_t>::max();

struct SimProgram {
  struct Stream {
    std::uint32_t rank = 0;
    std::int32_t priority = 0;  // lower runs first on the compute engine (CUDA's convention)
  };
  struct Op {
    std::uint32_t stream = 0;
    OpClass op_class = OpClass::Compute;
    double work_ns = 0;             // time it takes alone
    std::uint32_t match = kNoMatch; // collectives: every rank's op of one call shares it
    std::uint32_t dep_begin = 0, dep_count = 0;  // range in `deps`: ops it waits for
    std::int32_t tag = -1;          // the caller's label (the model: iteration number)
    double not_before_ns = 0;       // it starts no earlier (a collective whose peers are not simulated)
    double interference = 1.0;      // communication: how hard it slows compute (channels.hpp)
  };
  enum class StepKind : std::uint8_t { Cpu = 0, Issue = 1, Wait = 2, Barrier = 3 };
  struct Step {
    StepKind kind = StepKind::Cpu;
    double ns = 0;                  // Cpu: time spent; Barrier: time the barrier itself takes
    std::uint32_t target = 0;       // Issue/Wait: op; Barrier: barrier number
  };

  std::vector<Stream> streams;
  std::vector<Op> ops;
  std::vector<std::uint32_t> deps;
  std::vector<std::vector<Step>> hosts;  // one per rank
  double launch_latency_ns = 0;
  double compute_slowdown = 0, communication_slowdown = 0;
  // Hardware work queues per rank (CUDA_DEVICE_MAX_CONNECTIONS); 0: one per stream. A rank's
  // streams go to them in the order they were added.
  std::uint32_t connections = 0;

  std::uint32_t addStream(std::uint32_t rank, std::int32_t priority = 0);
  // Adds an op waiting for `waits_for` (ops added before it).
  std::uint32_t addOp(std::uint32_t stream, OpClass c, double work_ns, std::span<const std::uint32_t> waits_for = {},
                      std::uint32_t match = kNoMatch, std::int32_t tag = -1);
};

struct SimResult {
  bool ok = false;
  std::string error;                 // when not ok: what could never run (a deadlock)
  std::vector<double> start, end;    // per op, ns from the start of the simulation
  std::vector<double> host_end;      // per rank: when its host finished its steps
  std::vector<std::vector<double>> step_end;  // per rank, per step: host time after it
};

SimResult simulate(const SimProgram& program);

}  // namespace syncopate::tuner
