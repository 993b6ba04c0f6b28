// The waits a trace's CUDA runtime calls imply but no op or host-sync row records.
//
// Kineto traces without CUPTI synchronization records (every distributed one in
// ../shared/traces/kineto) keep `cudaStreamWaitEvent`, `cudaEventRecord` and the
// `*Synchronize` calls as bare runtime calls: no stream, no event. The model of an imported
// run needs their dependencies anyway, so it assumes the conservative one, the latest the
// call allows (docs/tuner.md, "Imported traces"):
//   - a blocking call (`cudaStreamSynchronize`, `cudaEventSynchronize`, ...) without a
//     host-sync row waits for every op its rank issued before it, as a device sync;
//   - a `cudaStreamWaitEvent` without a stream-wait op makes the stream of the next op its
//     thread launches wait for every op issued before the call on every other stream of the
//     rank: the event it waits for was recorded before the call, so on no later position.
#pragma once

#include <cstdint>
#include <vector>

#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::tuner {

struct InferredWait {
  enum class Kind : std::uint8_t { HostBlocks, StreamWaits };
  analyzer::Index call = analyzer::kNone;    // the runtime call (row of api_calls)
  Kind kind = Kind::HostBlocks;
  analyzer::Index stream = analyzer::kNone;  // StreamWaits: the stream taken to wait
  std::vector<analyzer::Index> after;        // the ops waited for, at most one per stream
};

struct InferredWaits {
  std::vector<std::vector<InferredWait>> per_rank;  // by rank row, in the order of their calls
  std::uint64_t blocking_calls = 0;
  std::uint64_t stream_waits = 0;     // placed on the next launch's stream
  std::uint64_t stream_waits_unplaced = 0;  // no launch followed on their thread before its next wait: no edge
};

// When each op was issued: the start of the call that launched it; for an op whose launch the
// trace lacks, its own start, or the issue of the next op of its stream whose launch is known
// if that was earlier (a stream runs its ops in issue order).
std::vector<std::int64_t> issueTimes(const analyzer::RunModel& model);

InferredWaits inferWaits(const analyzer::RunModel& model, const std::vector<std::int64_t>& issued);

}  // namespace syncopate::tuner
