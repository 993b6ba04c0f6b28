// What a layer of the preload library calls before it ends the process with `_Exit` (the
// tuner's runtime when its watchdog fires or a peer died): `_Exit` skips the recorder's exit
// handler, so this one does its work first, bounded, since the GPU work may be hung.
#pragma once

#include <cstdint>

namespace syncopate::preload {

enum class RecorderStop : std::uint8_t {
  NotRecording,  // this process has no active recorder: nothing to write
  Closed,        // everything recorded is in the store, which is closed
  TimedOut,      // the limit passed first: what was not committed yet is lost
};

// Stops recording, drains the threads' rings into the store and closes it (a checkpointed
// write-ahead log, as at a normal exit), giving up after `limit_ns`. GPU timing still
// outstanding is waited for during at most half the limit; what has not completed by then is
// dropped and counted (`ops_untimed_timing_failed`), as at a normal exit. Safe from any
// thread, and with the recorder's exit handler running at the same time (both wait for the
// same close). Not for the hot path: it takes the background thread's lock once.
RecorderStop stopRecorderWithin(std::int64_t limit_ns) noexcept;

}  // namespace syncopate::preload
