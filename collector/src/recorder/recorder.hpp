// The recorder: the process-wide state behind the recording layer. It is created on the first
// intercepted call that uses CUDA in a process asked to record (SYNCOPATE_OUTPUT_DIR), never in
// a process that does not touch CUDA, and owns the string catalog, the per-thread record rings,
// the GPU timing backend and the background thread that turns records into the store.
//
// Hot path (recording): one relaxed load says whether to record; the calling thread's state is
// a thread_local pointer; ids come from the catalog's lock-free lookups and per-thread blocks;
// records go to the thread's own ring. No lock, allocation or system call per event; the first
// sighting of a thread, stream or kernel name takes the slow path once.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "syncopate/dispatch/cuda_headers.hpp"
#include "syncopate/dispatch/call_facts.hpp"
#include "syncopate/collector/recorder_config.hpp"
#include "syncopate/collector/recorder_counters.hpp"
#include "syncopate/collector/process_identity.hpp"
#include "recorder/thread_state.hpp"
#include "syncopate/trace/catalog.hpp"
#include "syncopate/trace/records.hpp"
#include "syncopate/collector/timing_backend.hpp"

namespace syncopate::preload {

class BackgroundThread;
class IterationWindow;
struct KernelInfo;

class Recorder {
 public:
  // The active recorder, or null. Never activates.
  static Recorder* current() noexcept { return instance_.load(std::memory_order_acquire); }
  // The active recorder, activating it on first use in a process that is asked to record;
  // null when the process does not record (or activation failed, or is under way on this
  // very thread: calls the recorder makes itself are not recorded).
  // A call made while another thread activates waits for it (bounded), so that it is recorded.
  static Recorder* activate() noexcept {
    if (Recorder* recorder = current()) [[likely]] return recorder;
    return activateSlow();
  }

  bool recording() const noexcept { return recording_.load(std::memory_order_relaxed); }
  // Which recorder instance ids cached outside it belong to (a forked child starts a new one).
  std::uint64_t generation() const noexcept { return generation_; }
  // Recording is switched on and off by arm/attach (and on at activation otherwise); a window
  // switched on at `at_ns` holds the NVTX ranges that start from then on.
  void setRecording(bool on, std::int64_t at_ns = 0) noexcept;
  // Once a window is over and everything it recorded has its GPU times (background thread): the
  // timing backend stops collecting until the next window (TimingBackend::setCollecting).
  void stopCollectingWhileIdle() noexcept;
  std::int64_t windowStartNs() const noexcept { return window_start_ns_.load(std::memory_order_relaxed); }
  // Whether recording was ever switched on (an armed process that was never attached has no store).
  bool everRecorded() const noexcept { return window_start_ns_.load(std::memory_order_relaxed) != 0; }

  // This thread's state; null if it could not be allocated (counted).
  ThreadState* thread() noexcept;
  // This thread's state if it has one already (never allocates).
  ThreadState* existingThread() noexcept;

  // Armed processes: the window that NVTX iteration markers drive; null otherwise.
  IterationWindow* iterationWindow() noexcept { return window_; }
  // Asks the background thread to flush now (the C interface).
  void requestFlush() noexcept;
  // Waits at most `limit_ns` for the ops recorded so far to get their GPU times (before the
  // resources timing them go: cudaDeviceReset).
  void settle(std::int64_t limit_ns) noexcept;

  std::uint32_t nextCorrelation(ThreadState& thread) noexcept;
  int currentDevice(ThreadState& thread) noexcept;
  void forgetCurrentDevice(ThreadState& thread) noexcept { thread.device = -1; }
  void setCurrentDevice(ThreadState& thread, int device) noexcept { thread.device = device; }
  // The store's id of `stream` on `device` (registering it on first sight); kNoStream when
  // the catalog is full (counted).
  trace::StreamId streamId(ThreadState& thread, int device, cudaStream_t stream) noexcept;
  void registerCreatedStream(int device, cudaStream_t stream, unsigned flags, int priority) noexcept;
  trace::StringId apiName(ApiName name) const noexcept { return api_names_[static_cast<std::size_t>(name)]; }
  trace::StringId internName(std::string_view text) noexcept;
  trace::StringId kernelName(const KernelInfo& kernel) noexcept;

  // Graph capture: while any stream captures, each op checks its own stream first.
  void captureStarted() noexcept { captures_.fetch_add(1, std::memory_order_relaxed); }
  void captureEnded() noexcept { captures_.fetch_sub(1, std::memory_order_relaxed); }
  bool capturing(cudaStream_t stream) noexcept;

  // Appends records to the thread's ring (all or none; a refusal is counted by the ring).
  void push(ThreadState& thread, std::span<const trace::Record> records) noexcept {
    (void)thread.ring->tryPush(records);
  }

  trace::Catalog& catalog() noexcept { return *catalog_; }
  TimingBackend& timing() noexcept { return *timing_; }
  RecorderCounters& counters() noexcept { return counters_; }
  const RecorderConfig& config() const noexcept { return *config_; }
  const ProcessIdentity& identity() const noexcept { return identity_; }
  const std::string& backendReason() const noexcept { return backend_reason_; }

  // The rank, once known (from the environment at activation, else from NCCL).
  void learnRank(std::int32_t rank, std::int32_t world_size) noexcept;
  std::int32_t rank() const noexcept { return rank_.load(std::memory_order_relaxed); }
  std::int32_t worldSize() const noexcept { return world_size_.load(std::memory_order_relaxed); }

  // The background thread's view of the threads (it drains their rings and frees the exited;
  // only it may free one, so only it may use a snapshot's pointers after the call).
  std::vector<ThreadState*> threadsSnapshot();
  void forgetThread(ThreadState* thread);

  // Records refused by full rings, exited threads' included, and how many threads have rings:
  // safe from any thread.
  struct RingStats {
    std::uint64_t dropped = 0;
    std::uint64_t threads = 0;
    std::uint64_t buffered = 0;  // records waiting to be drained
  };
  RingStats ringStats();

  // Stops recording, drains and closes the store: at exit, or before the process image goes.
  void shutdown() noexcept;
  // The same within `limit_ns` (the recording layer's bounded stop, syncopate/collector/
  // recording_layer.hpp): whether the store was closed in time.
  bool shutdownWithin(std::int64_t limit_ns) noexcept;

  // In a forked child: forget the parent's recorder (abandoned, never closed).
  static void resetAfterFork() noexcept;

 private:
  Recorder(const RecorderConfig& config, ProcessIdentity identity) noexcept;
  ~Recorder() = delete;  // lives for the rest of the process (a forked child abandons it)

  static Recorder* activateSlow() noexcept;
  static Recorder* waitForActivation() noexcept;
  static Recorder* create() noexcept;
  ThreadState* createThreadState() noexcept;
  void chooseBackend() noexcept;

  static constinit std::atomic<Recorder*> instance_;

  const RecorderConfig* config_;
  ProcessIdentity identity_;
  std::uint64_t generation_;
  std::unique_ptr<trace::Catalog> catalog_;
  std::unique_ptr<TimingBackend> timing_;
  std::string backend_reason_;
  BackgroundThread* background_ = nullptr;
  IterationWindow* window_ = nullptr;
  trace::StringId api_names_[static_cast<std::size_t>(ApiName::Count)] = {};
  RecorderCounters counters_;

  std::atomic<bool> recording_{false};
  // Whether the timing backend collects; switched with recording_ under collecting_mutex_, so
  // that a window starting never finds it stopped by the end of the one before.
  bool collecting_ = true;
  std::mutex collecting_mutex_;
  std::atomic<std::int64_t> window_start_ns_{0};
  std::atomic<int> captures_{0};
  std::atomic<std::uint32_t> correlation_source_{1};
  std::atomic<std::int32_t> rank_{-1};
  std::atomic<std::int32_t> world_size_{-1};

  std::mutex threads_mutex_;
  std::vector<ThreadState*> threads_;
  std::uint64_t dropped_by_exited_threads_ = 0;  // guarded by threads_mutex_
};

}  // namespace syncopate::preload
