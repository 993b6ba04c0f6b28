// The recorder's background thread: the only writer of the process's store. Every few
// milliseconds it drains the threads' rings, lets the timing backend make progress, turns
// resolved pending ops into rows (in stream order), and at least every flush interval
// (<= 100 ms) commits a batch, so a process killed with SIGKILL leaves a store that is
// readable up to its last flush. It also serves the arm/attach control channel.
//
// A store that cannot be created (unwritable directory) or written (full disk) is reported
// once on stderr with what to do; the traced program keeps running either way.
#pragma once

#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "syncopate/trace/records.hpp"

namespace syncopate::preload {

class IterationWindow;
class Recorder;

class BackgroundThread {
 public:
  // Null if the thread could not be started.
  static BackgroundThread* start(Recorder& recorder) noexcept;

  // Final drain (waiting a bounded time for outstanding GPU timing), flush and close.
  void stopAndJoin() noexcept;
  // The same, for a process about to end without exit handlers: GPU timing is waited for
  // until `gpu_deadline_ns`, and the caller until `deadline_ns` (CLOCK_MONOTONIC). Whether the
  // store was closed by then (also when another stop began first).
  bool stopWithin(std::int64_t deadline_ns, std::int64_t gpu_deadline_ns) noexcept;

  // Asks for a flush as soon as possible (the C interface's flush, tests).
  void requestFlush() noexcept;
  // Waits until the ops recorded so far have their GPU times (none is pending), or until
  // `deadline_ns` (CLOCK_MONOTONIC): whether they do.
  bool settle(std::int64_t deadline_ns) noexcept;

  // The iteration window of this process (armed mode), fed by NVTX markers.
  IterationWindow* window() noexcept;

 private:
  struct State;
  explicit BackgroundThread(Recorder& recorder);
  void run() noexcept;
  void step(std::int64_t now_ns);
  void createStore();
  void drainRings();
  // Hands the host synchronizes `syncs` to stream order (what they prove finished), and clears it.
  void proveBySyncs(std::vector<trace::OpRecord>& syncs);
  // Once a window has settled and stayed idle a while: the timing backend stops collecting.
  void stopCollectingOnceIdle(std::int64_t now_ns);
  void describeNewDevices();
  void noteNcclProfiler();
  // meta.host_clock: whether timestamps now come from the TSC (common/clock.hpp) or the vDSO.
  void noteHostClock(bool tsc);
  void noteChannelBandwidth();
  void flush(std::int64_t now_ns);
  void finish(std::int64_t gpu_deadline_ns);

  Recorder& recorder_;
  std::unique_ptr<State> state_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool flush_requested_ = false;
  std::uint64_t settles_asked_ = 0;     // settle() calls so far
  std::uint64_t settles_answered_ = 0;  // of which nothing was pending after a step that followed them
  bool settle_wake_ = false;            // a settle() call wants a step now
  std::condition_variable settled_cv_;
  std::int64_t gpu_deadline_ns_ = 0;  // with stop_: how long the final drain waits for the GPU
  bool finished_ = false;             // the final drain is over (store closed, or given up)
  std::condition_variable finished_cv_;
  std::thread thread_;
};

}  // namespace syncopate::preload
