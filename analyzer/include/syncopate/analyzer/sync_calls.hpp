// The CUDA runtime and driver calls that synchronise the host or a stream with the GPU, and
// what each waits for. One list for the importers (which read a sync record's kind from the
// call it came from) and the analysis (which infers what a blocking call without a sync record
// waited for, and measures the host's time blocked in syncs).
#pragma once

#include <optional>
#include <string_view>

#include "syncopate/trace/types.hpp"

namespace syncopate::analyzer {

enum class SyncCallClass : std::uint8_t {
  Blocks,      // the host waits until the stream, event or device is done
  Polls,       // the host asks whether it is done and returns at once (cudaEventQuery)
  StreamWait,  // a stream waits for an event; the host does not (cudaStreamWaitEvent)
};

struct SyncCall {
  SyncCallClass what;
  trace::SyncKind kind;  // what is waited for: a stream, an event, the device or the context
};

// The call named `name` (as the API spells it, without Nsight's version suffix), or nullopt
// for a call that does not synchronise.
std::optional<SyncCall> syncCallNamed(std::string_view name);

}  // namespace syncopate::analyzer
