// What the recorder was asked to do, read once from the environment that `syncopate record`
// (or `syncopate run`) prepared. A process without SYNCOPATE_OUTPUT_DIR has no recorder: the
// library then only passes calls through.
#pragma once

#include <cstdint>
#include <string>

namespace syncopate::preload {

enum class BackendChoice : std::uint8_t { Auto, Cupti, Events };

// Where host timestamps come from (docs/collector.md, "The host clock"): Auto reads the TSC
// where the kernel keeps CLOCK_MONOTONIC with it, System always the vDSO, Tsc the TSC wherever
// the processor declares it invariant, whatever source the kernel chose.
enum class HostClockChoice : std::uint8_t { Auto, System, Tsc };

struct RecorderConfig {
  bool enabled = false;           // SYNCOPATE_OUTPUT_DIR is set
  std::string output_dir;         // SYNCOPATE_OUTPUT_DIR: the run directory
  bool armed = false;             // SYNCOPATE_ARMED=1: load dormant, record when attached
  BackendChoice backend = BackendChoice::Auto;  // SYNCOPATE_BACKEND=auto|cupti|events
  std::string iteration_marker = "ProfilerStep";  // SYNCOPATE_ITERATION_MARKER
  // SYNCOPATE_BUFFER_RECORDS, per thread: 4 MiB, 65 ms of records at a million launches a
  // second, longer than the background thread was seen held up on two cores shared with the
  // launching thread and the store's checkpointer (docs/collector.md, "Figures").
  std::uint32_t ring_records = 1u << 17;
  std::uint32_t flush_interval_ms = 100;          // SYNCOPATE_FLUSH_MS (at most 100)
  std::uint32_t event_pairs_per_device = 1u << 16;  // SYNCOPATE_EVENT_PAIRS (created as needed)
  HostClockChoice host_clock = HostClockChoice::Auto;  // SYNCOPATE_HOST_CLOCK=auto|system|tsc
  std::string problem;            // a sentence when a variable had to be corrected
};

// Parsed on first use; the same object for the life of the process.
const RecorderConfig& recorderConfig() noexcept;

// Exposed for tests: parse from a getenv-like function.
RecorderConfig parseRecorderConfig(const char* (*lookup)(const char* name));

const char* toString(BackendChoice choice) noexcept;

}  // namespace syncopate::preload
