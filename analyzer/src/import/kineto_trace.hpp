// A PyTorch profiler (Kineto) Chrome trace, parsed into compact events handed to a sink.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "input_file.hpp"
#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/string_table.hpp"

namespace syncopate::analyzer::import {

// The event categories the importer knows (Kineto's `cat`), and Other for the rest.
enum class KinetoCat : std::uint8_t {
  Kernel, GpuMemcpy, GpuMemset, CudaRuntime, CudaDriver, CudaSync,
  CpuOp, UserAnnotation, GpuUserAnnotation, PythonFunction, CpuInstant, Trace,
  Ac2g, AsyncCpuToGpu, FwdBwd, None, Other,
};

// A category by its name as Kineto writes it (the one place the names are spelled).
KinetoCat categoryOf(std::string_view name);

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

// What the file says outside its events.
struct KinetoHeader {
  std::optional<std::int32_t> rank, world_size;
  std::optional<std::int64_t> base_time_ns;  // baseTimeNanoseconds: added to ts for wall time
  std::string host_name;
  std::vector<KinetoDevice> devices;
};

// Events handed over as they are parsed, so that the store can be written while the rest of
// the file is still being read. Names are ids of the caller's StringTable; `new_strings` gives
// the text of the ids first used in this batch (views into the table's stable storage, so the
// consumer never touches the table, which only the parser writes).
struct KinetoBatch {
  std::vector<KinetoEvent> events;
  std::vector<std::pair<StringId, std::string_view>> new_strings;
};

class KinetoSink {
 public:
  virtual ~KinetoSink() = default;
  // Once, when the event array starts, with what the file said before it (Kineto writes its
  // metadata first; what comes after the events is in the summary).
  virtual trace::Status begin(const KinetoHeader& header) = 0;
  virtual trace::Status consume(KinetoBatch batch) = 0;
};

// Where a trace cut off while it was written (a job killed while the profiler saved it) stops.
struct KinetoCut {
  std::size_t text_bytes = 0;             // where its text stops (inflated, for gzip)
  std::optional<std::size_t> gzip_bytes;  // where its gzip stream stops, before its end
};
// "its text stops at byte N" and, for gzip, where its stream does: for the sentences about it.
std::string describeCut(const KinetoCut& cut);

struct KinetoSummary {
  KinetoHeader header;  // everything the file said, also after the events
  std::int64_t json_events = 0;                                 // every element of traceEvents (kept)
  std::map<std::pair<char, std::string>, std::int64_t> counts;  // (ph, cat) -> events
  std::optional<KinetoCut> cut;                                 // when the trace was cut off
};

// Parses the trace, passing its events to `sink` in batches. Fails with a sentence naming the
// file when the text is not JSON, not a Chrome trace (no traceEvents array) or an event is
// malformed (e.g. a timestamp that is not a number), or when the sink fails.
// A text that stops before its document closes was cut off while it was written: it is closed
// after its last complete event (or member: findJsonCut) and parsed again, the events already
// handed over not handed again; `cut` says where it stopped, and what it said after the cut is
// lost. It fails when the text is damaged before it stops (with the sentence the damage gets),
// or when it stops before its first complete event, which leaves nothing to import.
trace::Result<KinetoSummary> parseKinetoTrace(TextBuffer& text, const std::string& file_name, StringTable& strings,
                                              KinetoSink& sink);

// Thread names from the trace's thread_name metadata events (Kineto writes them after all other
// events, too late for a store written while parsing): tid -> the last name given.
std::map<std::int64_t, std::string> kinetoThreadNames(const TextBuffer& text);

// Decimal text (as JSON writes numbers: 12, 12.345, 1.2e3) in microseconds, to nanoseconds,
// exactly for up to three decimals (no detour through double, which cannot hold 2^53+ ns).
std::optional<std::int64_t> microsToNanos(std::string_view token);

}  // namespace syncopate::analyzer::import
