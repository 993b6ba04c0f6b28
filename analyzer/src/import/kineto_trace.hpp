// A PyTorch profiler (Kineto) Chrome trace, parsed into compact events: the step between the
// JSON text and the store, so that the store is written knowing the whole file (the rank and
// time base may come after the events).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "input_file.hpp"
#include "syncopate/analyzer/expected.hpp"
#include "syncopate/analyzer/string_table.hpp"

namespace syncopate::analyzer::import {

// The event categories the importer knows (Kineto's `cat`), and Other for the rest.
enum class KinetoCat : std::uint8_t {
  Kernel, GpuMemcpy, GpuMemset, CudaRuntime, CudaDriver, CudaSync,
  CpuOp, UserAnnotation, GpuUserAnnotation, PythonFunction, CpuInstant, Trace,
  Ac2g, AsyncCpuToGpu, FwdBwd, None, Other,
};

inline constexpr std::int64_t kAbsent = INT64_MIN;

struct KinetoEvent {
  char ph = 0;
  KinetoCat cat = KinetoCat::None;
  StringId cat_name = 0;   // the category as written (for Other)
  StringId name = 0;
  std::int64_t ts = 0, dur = 0;  // ns
  std::int64_t pid = kAbsent, tid = kAbsent;  // numbers; kAbsent when the trace used a string
  std::int64_t id = kAbsent;  // flow id
  bool binding_end = false;   // "bp": "e"
  // args
  std::int64_t correlation = kAbsent, external_id = kAbsent, stream = kAbsent, device = kAbsent;
  std::int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  std::int64_t bytes = kAbsent;
  StringId coll_name = 0, dtype = 0, pg_name = 0, pg_ranks = 0;
  std::int64_t in_nelems = kAbsent, out_nelems = kAbsent, group_size = kAbsent;
  StringId sync_kind = 0;
  std::int64_t wait_stream = kAbsent, wait_record_corr = kAbsent, wait_event = kAbsent;
  std::int64_t addr = kAbsent, mem_bytes = kAbsent, device_type = kAbsent, device_id = kAbsent;
  StringId arg_name = 0;    // metadata events: args.name
  StringId arg_labels = 0;  // metadata events: args.labels
};

struct KinetoDevice {
  std::int32_t id = 0;
  std::string name;
  std::optional<std::int32_t> sm_count;
  std::optional<std::int64_t> memory_bytes;
};

struct KinetoTrace {
  StringTable strings;
  std::vector<KinetoEvent> events;
  std::optional<std::int32_t> rank, world_size;
  std::optional<std::int64_t> base_time_ns;  // baseTimeNanoseconds: added to ts for wall time
  std::string host_name;
  std::vector<KinetoDevice> devices;
  std::int64_t json_events = 0;                      // every element of traceEvents
  std::map<std::pair<char, std::string>, std::int64_t> counts;  // (ph, cat) -> events
};

// Fails with a sentence naming the file when the text is not JSON, not a Chrome trace
// (no traceEvents array) or an event is malformed (e.g. a timestamp that is not a number).
Expected<KinetoTrace> parseKinetoTrace(const TextBuffer& text, const std::string& file_name);

// Decimal text (as JSON writes numbers: 12, 12.345, 1.2e3) in microseconds, to nanoseconds,
// exactly for up to three decimals (no detour through double, which cannot hold 2^53+ ns).
std::optional<std::int64_t> microsToNanos(std::string_view token);

}  // namespace syncopate::analyzer::import
