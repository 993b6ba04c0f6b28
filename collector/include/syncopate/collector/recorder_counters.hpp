// Everything the recorder did not record as it happened, counted (never silent). The
// background thread stores them in the `counters` table at every flush, under these names.
#pragma once

#include <atomic>
#include <cstdint>

namespace syncopate::preload {

#define SYNCOPATE_RECORDER_COUNTERS(X)                                                          \
  X(ops_untimed_no_timing_slot, "ops issued while no GPU timing slot was free")                 \
  X(ops_untimed_timing_failed, "ops whose timing could not be taken or resolved")               \
  X(ops_captured_into_graphs, "ops issued into a stream being captured into a CUDA graph")       \
  X(graph_launches, "CUDA graph launches (their kernels are not broken down)")                  \
  X(nccl_group_ops_overflow, "NCCL calls beyond the per-group limit, not timed")                \
  X(nvtx_depth_overflow, "NVTX push/pop ranges nested deeper than the recorder keeps")          \
  X(nvtx_unmatched_pop, "NVTX pops without a matching push")                                    \
  X(nvtx_start_end_overflow, "NVTX start/end ranges lost because too many were open at once")   \
  X(thread_buffer_unavailable, "calls on threads whose buffer could not be allocated")          \
  X(streams_not_registered, "ops on streams the catalog could not register")                   \
  X(nccl_profiler_events_unjoined, "NCCL profiler events of calls the collector did not record (not stored)")

struct RecorderCounters {
#define SYNCOPATE_COUNTER_FIELD(name, text) std::atomic<std::uint64_t> name{0};
  SYNCOPATE_RECORDER_COUNTERS(SYNCOPATE_COUNTER_FIELD)
#undef SYNCOPATE_COUNTER_FIELD
};

}  // namespace syncopate::preload
