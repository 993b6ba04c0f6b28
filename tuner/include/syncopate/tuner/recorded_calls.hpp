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
#include "syncopate/tuner/op_pointers.hpp"

namespace syncopate::tuner {

struct RecordedCall {
  Call call;                               // touches: see RecordedRank::touches
  analyzer::Index op = analyzer::kNone;    // the GPU op it issued, if any
  std::int64_t start = 0, end = 0;         // the host call, aligned ns
  std::int64_t iteration = -1;             // the step it was made in; -1 outside steps
  // A collective's per-communicator sequence number in the store, the same on every rank: how
  // the model matches it across ranks, whatever calls another rank's store lost.
  std::int64_t collective_seq = -1;
  std::uint32_t touch_begin = 0, touch_count = 0;
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

struct RecordedRun {
  std::vector<RecordedRank> ranks;
};

// Stream handles the model gives the runtime's own streams (never a real cudaStream_t).
inline constexpr StreamHandle kModelCommunicationStream = 0xFFFFFFFFFFFF0001ull;
inline constexpr StreamHandle kModelJoinStream = 0xFFFFFFFFFFFF0002ull;

// Fails when collectives carry no buffer addresses (the tuner cannot tell which kernels
// produce and consume them: runs imported without pointer arguments).
trace::Result<RecordedRun> recordedCalls(const analyzer::RunModel& model, const analyzer::Iterations& iterations,
                                         const OpPointers& pointers);

}  // namespace syncopate::tuner
