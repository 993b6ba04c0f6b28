// A recorded run as the sequence of calls each rank made (the scheduler's vocabulary), in the
// order its host made them, each with the GPU op it issued, its host time and its iteration.
// This is what the what-if model feeds through the scheduler, as the runtime will feed the
// live calls of the re-run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/iterations.hpp"
#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/tuner/calls.hpp"
#include "syncopate/tuner/inferred_waits.hpp"
#include "syncopate/tuner/op_pointers.hpp"

namespace syncopate::tuner {

struct RecordedCall {
  Call call;                               // touches: see RecordedRank::touches
  analyzer::Index op = analyzer::kNone;    // the GPU op it issued, if any
  std::int64_t start = 0, end = 0;         // the host call, aligned ns
  analyzer::Index thread = analyzer::kNone;  // the host thread that made it, when known
  std::int64_t iteration = -1;             // the step it was made in; -1 outside steps
  // A collective's per-communicator sequence number in the store, the same on every rank: how
  // the model matches it across ranks, whatever calls another rank's store lost.
  std::int64_t collective_seq = -1;
  std::uint32_t touch_begin = 0, touch_count = 0;
  // A synchronous copy, or a blocking call whose wait the model inferred: how long it went on
  // blocking after the GPU work it can have waited for had ended (the copy's host side, another
  // thread, another rank, the CPU: nothing the trace shows), replayed as host time after the wait.
  std::int64_t blocked_after_gpu_ns = 0;
};

struct RecordedRank {
  analyzer::Index rank = 0;                // row in RunModel::ranks
  std::vector<RecordedCall> calls;
  std::vector<Touch> touches;
  std::vector<std::int64_t> comm_ids;      // by the communicator index the calls use
  // The first call of each iteration number seen (index into calls), for windows.
  std::vector<std::pair<std::int64_t, std::size_t>> iteration_first_call;

  // The call with its touches attached.
  Call call(std::size_t i) const;
};

// Fills rank.iteration_first_call from its calls' iterations.
void indexIterations(RecordedRank& rank);

// What a run does not say and the model assumed instead: all zero for recorded runs; imported
// traces carry no buffer addresses and, without CUPTI's synchronization records, no stream or
// event of their waits (inferred_waits.hpp).
struct RunAssumptions {
  std::uint64_t collectives_without_buffers = 0;  // the producers and consumers of their data are unknown
  std::uint64_t p2p_without_arguments = 0;        // peer unknown: replayed as measured, alone
  std::uint64_t blocking_calls_inferred = 0;
  std::uint64_t stream_waits_inferred = 0;
  std::uint64_t stream_waits_unplaced = 0;
};

struct RecordedRun {
  std::vector<RecordedRank> ranks;
  RunAssumptions assumptions;
  bool imported = false;  // some store came from `syncopate import`: no op carries its pointer arguments
  // Schedules that move collectives need to know which kernels produce and consume them, and
  // every transfer's arguments; without them only the recorded schedule can be replayed.
  bool buffersKnown() const {
    return !imported && assumptions.collectives_without_buffers == 0 && assumptions.p2p_without_arguments == 0;
  }
};

// Stream handles the model gives the runtime's own streams (never a real cudaStream_t).
inline constexpr StreamHandle kModelCommunicationStream = 0xFFFFFFFFFFFF0001ull;
inline constexpr StreamHandle kModelJoinStream = 0xFFFFFFFFFFFF0002ull;
// Events the model records for an inferred stream wait (never a real cudaEvent_t): this bit and a count.
inline constexpr std::uint64_t kInferredEventBit = 1ull << 63;

// Calls that the trace keeps only as runtime calls (an imported trace's `cudaStreamWaitEvent`,
// its `*Synchronize` without a sync record) enter as the waits inferWaits() assumes: a device
// sync, or event records on every other stream and a stream wait.
trace::Result<RecordedRun> recordedCalls(const analyzer::RunModel& model, const analyzer::Iterations& iterations,
                                         const OpPointers& pointers);

}  // namespace syncopate::tuner
