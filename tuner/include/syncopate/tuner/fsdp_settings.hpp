// PyTorch FSDP's own scheduling settings (torch.distributed.fsdp.FullyShardedDataParallel,
// FULL_SHARD), read from a run and predicted by writing the calls each value makes (docs/tuner.md,
// "FSDP: prefetching and the rate limiter"). FSDP issues each unit's all-gather on its unshard
// stream and makes the compute stream wait for that stream before the unit's kernels; where the
// all-gather is issued is the setting:
//   - forward_prefetch: the next unit's all-gather right after this unit's wait, before its
//     forward kernels (True), or when the next unit's forward starts, just before its own wait
//     (False, the default);
//   - backward_prefetch: in backward, the next unit's all-gather right after this unit's wait
//     (BACKWARD_PRE, the default), after this unit's gradient kernels and before its
//     reduce-scatter is handed to the post-backward stream (BACKWARD_POST), or just before its own
//     wait (None);
//   - limit_all_gathers: each freeing of gathered parameters records an event on the compute
//     stream, and before an all-gather, while two such events are outstanding, the host waits for
//     the oldest (True, the default; False: no host wait).
// NCCL runs the communicator's collectives in the order they were issued, so moving an
// all-gather ahead of a reduce-scatter lets it run first. Each all-gather keeps its arguments and
// buffers and takes the host time of the call it is written beside; everything else keeps its
// recorded times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "syncopate/trace/status.hpp"
#include "syncopate/tuner/recorded_calls.hpp"

namespace syncopate::tuner {

enum class FsdpBackwardPrefetch : std::uint8_t { Pre, Post, None };
// As FSDP's BackwardPrefetch names them: "BACKWARD_PRE", "BACKWARD_POST", "None".
const char* toString(FsdpBackwardPrefetch prefetch);

struct FsdpSettings {
  FsdpBackwardPrefetch backward_prefetch = FsdpBackwardPrefetch::Pre;
  bool forward_prefetch = false;
  bool limit_all_gathers = true;
};

struct FsdpRun {
  bool found = false;
  std::string why_not;  // when not found, in one sentence
  // The communicator of the units' all-gathers and reduce-scatters (the one whose reduce-scatters
  // move the most bytes a step), and rank 0's streams: the unshard stream the all-gathers are
  // issued on, the compute stream that waits for it (each rank's own handles are found alike).
  std::uint64_t comm = 0;
  StreamHandle unshard = kLegacyStream, compute = kLegacyStream;
  // Rank 0's first modelled step: the units gathered for forward, those gathered again for
  // backward, the reduce-scatters, and the bytes one forward gathers.
  std::size_t forward_gathers = 0, backward_gathers = 0, reduce_scatters = 0;
  std::uint64_t parameter_bytes = 0;
  FsdpSettings recorded;
  // Two units or more in forward: else forward_prefetch changes nothing.
  bool forward_prefetch_applies = false;
};

// The run's FSDP in rank 0's step `step` (the first modelled one), or why it shows none.
FsdpRun findFsdp(const RecordedRun& run, std::int64_t step);

// The run's calls in steps [first, last] written as FSDP issues them with `settings` (above).
// The limiter's freeings are the recorded ones where the run had it, else written where FSDP's
// hooks free gathered parameters. Fails, in a sentence, where a rank's step is not FSDP's
// pattern.
trace::Result<RecordedRun> fsdpSettingsCalls(const RecordedRun& run, std::int64_t first, std::int64_t last,
                                             const FsdpRun& fsdp, const FsdpSettings& settings);

// The line to change: FullyShardedDataParallel's keyword argument with `value` ("BACKWARD_POST",
// "True", ...) for `setting` ("backward_prefetch", "forward_prefetch", "limit_all_gathers").
std::string fsdpHowTo(const std::string& setting, const std::string& value);

}  // namespace syncopate::tuner
