// Everything the recorder did not record as it happened, counted (never silent). The
// background thread stores them in the `counters` table at every flush, each under the key of
// its entry in the diagnostics list (syncopate/trace/diagnostics.inc), which says what it counts.
#pragma once

#include <atomic>
#include <cstdint>

namespace syncopate::preload {

#define SYNCOPATE_RECORDER_COUNTERS(X) \
  X(ops_untimed_no_timing_slot)        \
  X(ops_untimed_timing_failed)         \
  X(ops_without_gpu_activity)          \
  X(ops_captured_into_graphs)          \
  X(graph_launches)                    \
  X(nccl_group_ops_overflow)           \
  X(nvtx_depth_overflow)               \
  X(nvtx_unmatched_pop)                \
  X(nvtx_start_end_overflow)           \
  X(thread_buffer_unavailable)         \
  X(streams_not_registered)            \
  X(nccl_profiler_events_unjoined)

struct RecorderCounters {
#define SYNCOPATE_COUNTER_FIELD(key) std::atomic<std::uint64_t> key{0};
  SYNCOPATE_RECORDER_COUNTERS(SYNCOPATE_COUNTER_FIELD)
#undef SYNCOPATE_COUNTER_FIELD
};

}  // namespace syncopate::preload
