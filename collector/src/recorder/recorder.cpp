#include "recorder/recorder.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <new>
#include <thread>

#include "common/clock.hpp"
#include "syncopate/dispatch/log.hpp"
#include "syncopate/dispatch/chain.hpp"
#include "syncopate/dispatch/kernel_registry.hpp"
#include "recorder/background.hpp"
#include "timing/backend_choice.hpp"

namespace syncopate::preload {

constinit std::atomic<Recorder*> Recorder::instance_{nullptr};

namespace {

// 0: not activated yet, 1: activation under way, 2: active, 3: this process does not record.
constinit std::atomic<int> activation{0};
// A forked child starts a new recorder generation: its parent's state (store, rings, thread)
// is not its own.
constinit std::atomic<std::uint64_t> recorderGeneration{1};
constinit std::atomic<bool> forkedChild{false};

[[gnu::tls_model("initial-exec")]] constinit thread_local ThreadState* threadState = nullptr;
[[gnu::tls_model("initial-exec")]] constinit thread_local bool activatingHere = false;

pthread_key_t threadExitKey;

// At thread exit (after the thread's C++ thread_local destructors): its ring is drained and
// freed by the background thread; a call the thread still makes gets a fresh state.
void markThreadExited(void* state) {
  if (threadState == state) threadState = nullptr;
  static_cast<ThreadState*>(state)->exited.store(true, std::memory_order_release);
}

void afterForkInChild() {
  recorderGeneration.fetch_add(1, std::memory_order_relaxed);
  forkedChild.store(true, std::memory_order_relaxed);
  // The parent's recorder (and its store connection) is abandoned, never closed: closing it
  // here could checkpoint and delete the parent's write-ahead log.
  Recorder::resetAfterFork();
  threadState = nullptr;
  activation.store(0, std::memory_order_release);
}

void atExit() {
  if (Recorder* recorder = Recorder::current()) recorder->shutdown();
}

constexpr std::uint32_t kCorrelationBlock = 256;

// How long a call waits for another thread's activation of the recorder (which takes
// milliseconds, and waits on no application thread) before it goes unrecorded rather than hang
// (should that activation ever wait on the calling thread, e.g. for the loader's lock).
constexpr std::int64_t kActivationWaitNs = 5'000'000'000;

}  // namespace

void Recorder::resetAfterFork() noexcept { instance_.store(nullptr, std::memory_order_release); }

Recorder::Recorder(const RecorderConfig& config, ProcessIdentity identity) noexcept
    : config_(&config), identity_(std::move(identity)), generation_(recorderGeneration.load(std::memory_order_relaxed)) {}

Recorder* Recorder::activateSlow() noexcept {
  if (activatingHere) return nullptr;  // a call the activation itself makes
  int state = activation.load(std::memory_order_acquire);
  if (state == 3) return nullptr;
  if (state == 2) return current();
  if (!recorderConfig().enabled) {
    activation.store(3, std::memory_order_release);
    return nullptr;
  }
  int expected = 0;
  if (!activation.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) return waitForActivation();
  activatingHere = true;
  Recorder* recorder = create();
  activatingHere = false;
  if (recorder == nullptr) {
    activation.store(3, std::memory_order_release);
    return nullptr;
  }
  instance_.store(recorder, std::memory_order_release);
  activation.store(2, std::memory_order_release);
  return recorder;
}

Recorder* Recorder::waitForActivation() noexcept {
  // Another thread is activating: the calls this one makes meanwhile (a worker setting its
  // device, creating its stream, allocating) belong to the recording too.
  const std::int64_t deadline = monotonicNs() + kActivationWaitNs;
  while (activation.load(std::memory_order_acquire) == 1) {
    if (monotonicNs() > deadline) {
      log(LogLevel::Warn, "a call waited %lld s for another thread to start the recorder; it is not recorded",
          static_cast<long long>(kActivationWaitNs / 1'000'000'000));
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return current();
}

Recorder* Recorder::create() noexcept {
  try {
    const RecorderConfig& config = recorderConfig();
    if (!config.problem.empty()) log(LogLevel::Warn, "%s", config.problem.c_str());
    bool child = forkedChild.load(std::memory_order_relaxed);
    auto* recorder = new Recorder(config, readProcessIdentity([](const char* name) -> const char* { return std::getenv(name); },
                                                              /*trust_environment_rank=*/!child));
    recorder->catalog_ = std::make_unique<trace::Catalog>();
    if (!recorder->catalog_->valid()) {
      log(LogLevel::Error, "out of memory for the string catalog; this process is not recorded");
      return nullptr;
    }
    for (std::size_t i = 0; i < static_cast<std::size_t>(ApiName::Count); ++i) {
      recorder->api_names_[i] = recorder->catalog_->intern(kApiNameText[i]);
    }
    if (recorder->identity_.rank) recorder->rank_.store(*recorder->identity_.rank, std::memory_order_relaxed);
    if (recorder->identity_.world_size) {
      recorder->world_size_.store(*recorder->identity_.world_size, std::memory_order_relaxed);
    }
    BackendSelection selection = selectTimingBackend(config);
    recorder->timing_ = std::move(selection.backend);
    recorder->backend_reason_ = std::move(selection.reason);

    static bool processHooksInstalled = false;
    if (!processHooksInstalled) {
      processHooksInstalled = true;
      pthread_key_create(&threadExitKey, markThreadExited);
      pthread_atfork(nullptr, nullptr, afterForkInChild);
      // The runtime registers its own teardown when it initialises; initialising it first
      // puts this handler after it in the atexit list, so it runs before the runtime goes.
      if (const CudartHelpers* helpers = cudartHelpers(); helpers != nullptr && helpers->cudaGetDeviceCount != nullptr) {
        int devices = 0;
        (void)helpers->cudaGetDeviceCount(&devices);
      }
      std::atexit(atExit);
    }

    recorder->background_ = BackgroundThread::start(*recorder);
    if (recorder->background_ == nullptr) {
      log(LogLevel::Error, "could not start the background writer thread; this process is not recorded");
      return nullptr;
    }
    if (config.armed) {
      recorder->window_ = recorder->background_->window();
      recorder->stopCollectingWhileIdle();  // dormant until attached: nothing to time
    }
    if (!config.armed) recorder->setRecording(true);
    log(LogLevel::Info, "recording into %s (backend %s: %s)%s", config.output_dir.c_str(), recorder->timing_->name(),
        recorder->backend_reason_.c_str(), config.armed ? ", armed" : "");
    return recorder;
  } catch (...) {
    log(LogLevel::Error, "could not set up the recorder (out of memory); this process is not recorded");
    return nullptr;
  }
}

void Recorder::setRecording(bool on, std::int64_t at_ns) noexcept {
  const std::lock_guard lock(collecting_mutex_);
  if (on && !collecting_) {
    collecting_ = timing_->setCollecting(true);
    if (collecting_) log(LogLevel::Debug, "GPU timing (%s) collects: a window records", timing_->name());
  }
  if (on) window_start_ns_.store(at_ns != 0 ? at_ns : monotonicNs(), std::memory_order_relaxed);
  recording_.store(on, std::memory_order_release);
}

void Recorder::stopCollectingWhileIdle() noexcept {
  const std::lock_guard lock(collecting_mutex_);
  if (!collecting_ || recording_.load(std::memory_order_acquire)) return;
  collecting_ = !timing_->setCollecting(false);
  if (!collecting_) log(LogLevel::Debug, "GPU timing (%s) stops collecting: nothing is recorded", timing_->name());
}

ThreadState* Recorder::thread() noexcept {
  ThreadState* state = threadState;
  if (state != nullptr && state->generation == generation_) [[likely]] return state;
  return createThreadState();
}

ThreadState* Recorder::createThreadState() noexcept {
  auto* state = new (std::nothrow) ThreadState;
  if (state != nullptr) state->ring = Ring::create(config_->ring_records);
  if (state == nullptr || state->ring == nullptr) {
    delete state;
    counters_.thread_buffer_unavailable.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  state->generation = generation_;
  state->tid = static_cast<std::int64_t>(syscall(SYS_gettid));
  char name[32] = {};
  pthread_getname_np(pthread_self(), name, sizeof name);
  state->thread_id = catalog_->registerThread({state->tid, name[0] != '\0' ? catalog_->intern(name) : trace::kNoString});
  try {
    std::lock_guard lock(threads_mutex_);
    threads_.push_back(state);
  } catch (...) {
    delete state;
    counters_.thread_buffer_unavailable.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  pthread_setspecific(threadExitKey, state);
  threadState = state;
  return state;
}

std::vector<ThreadState*> Recorder::threadsSnapshot() {
  std::lock_guard lock(threads_mutex_);
  return threads_;
}

void Recorder::forgetThread(ThreadState* thread) {
  std::lock_guard lock(threads_mutex_);
  std::erase(threads_, thread);
  dropped_by_exited_threads_ += thread->ring->dropped();
  delete thread;
}

Recorder::RingStats Recorder::ringStats() {
  std::lock_guard lock(threads_mutex_);
  RingStats stats;
  stats.dropped = dropped_by_exited_threads_;
  for (ThreadState* thread : threads_) {
    stats.dropped += thread->ring->dropped();
    stats.buffered += thread->ring->sizeApprox();
    ++stats.threads;
  }
  return stats;
}

std::uint32_t Recorder::nextCorrelation(ThreadState& thread) noexcept {
  if (thread.next_correlation == thread.correlation_end) [[unlikely]] {
    thread.next_correlation = correlation_source_.fetch_add(kCorrelationBlock, std::memory_order_relaxed);
    thread.correlation_end = thread.next_correlation + kCorrelationBlock;
    if (thread.next_correlation == 0) ++thread.next_correlation;  // 0 means "none" (after 2^32 wraps)
  }
  return thread.next_correlation++;
}

int Recorder::currentDevice(ThreadState& thread) noexcept {
  if (thread.device >= 0) [[likely]] return thread.device;
  int device = 0;
  const CudartHelpers* helpers = cudartHelpers();
  if (helpers != nullptr && helpers->cudaGetDevice != nullptr && helpers->cudaGetDevice(&device) == cudaSuccess) {
    thread.device = device;
    return device;
  }
  // A program that only uses the driver: the current context's device.
  CUdevice context_device = 0;
  const DriverHelpers* driver = driverHelpers();
  if (driver != nullptr && driver->cuCtxGetDevice != nullptr && driver->cuCtxGetDevice(&context_device) == CUDA_SUCCESS) {
    thread.device = context_device;
    return context_device;
  }
  return 0;
}

namespace {

// cudaStreamLegacy is 0x1 and cudaStreamPerThread 0x2 (driver_types.h).
const char* specialStreamName(std::uint64_t handle) {
  if (handle == 0) return "default";
  if (handle == 1) return "legacy default";
  if (handle == 2) return "per-thread default";
  return nullptr;
}

}  // namespace

trace::StreamId Recorder::streamId(ThreadState& thread, int device, cudaStream_t stream) noexcept {
  auto handle = reinterpret_cast<std::uint64_t>(stream);
  if (thread.cached_stream_handle == handle && thread.cached_stream_device == device) [[likely]] {
    return thread.cached_stream_id;
  }
  trace::StreamId id = catalog_->findStream(device, handle);
  if (id == trace::kNoStream) {
    // First sight of a stream the program did not create through the runtime here (the
    // default streams, NCCL's, the driver's): its attributes are asked for once.
    trace::CatalogStream info;
    info.device = device;
    info.handle = handle;
    if (const char* special = specialStreamName(handle)) {
      info.name_id = catalog_->intern(special);
    } else if (const CudartHelpers* helpers = cudartHelpers()) {
      unsigned flags = 0;
      int priority = 0;
      if (helpers->cudaStreamGetFlags != nullptr && helpers->cudaStreamGetFlags(stream, &flags) == cudaSuccess) {
        info.flags = flags;
      }
      if (helpers->cudaStreamGetPriority != nullptr && helpers->cudaStreamGetPriority(stream, &priority) == cudaSuccess) {
        info.priority = priority;
      }
    }
    id = catalog_->registerStream(info);
    if (id == trace::kNoStream) {
      counters_.streams_not_registered.fetch_add(1, std::memory_order_relaxed);
      return id;
    }
  }
  thread.cached_stream_handle = handle;
  thread.cached_stream_device = device;
  thread.cached_stream_id = id;
  return id;
}

void Recorder::registerCreatedStream(int device, cudaStream_t stream, unsigned flags, int priority) noexcept {
  trace::CatalogStream info;
  info.device = device;
  info.handle = reinterpret_cast<std::uint64_t>(stream);
  info.flags = flags;
  info.priority = priority;
  if (catalog_->registerStream(info) == trace::kNoStream) {
    counters_.streams_not_registered.fetch_add(1, std::memory_order_relaxed);
  }
}

trace::StringId Recorder::internName(std::string_view text) noexcept { return catalog_->intern(text); }

ThreadState* Recorder::existingThread() noexcept {
  ThreadState* state = threadState;
  return state != nullptr && state->generation == generation_ ? state : nullptr;
}

void Recorder::requestFlush() noexcept {
  if (background_ != nullptr) background_->requestFlush();
}

void Recorder::settle(std::int64_t limit_ns) noexcept {
  if (background_ != nullptr) (void)background_->settle(monotonicNs() + limit_ns);
}

trace::StringId Recorder::kernelName(const KernelInfo& kernel) noexcept {
  std::uint64_t cached = kernel.recorderName.load(std::memory_order_relaxed);
  if ((cached >> 32) == generation_) [[likely]] return static_cast<trace::StringId>(cached);
  trace::StringId id = catalog_->intern(kernel.displayName);
  const_cast<KernelInfo&>(kernel).recorderName.store((generation_ << 32) | id, std::memory_order_relaxed);
  return id;
}

bool Recorder::capturing(cudaStream_t stream) noexcept {
  if (captures_.load(std::memory_order_relaxed) == 0) [[likely]] return false;
  const CudartHelpers* helpers = cudartHelpers();
  if (helpers == nullptr || helpers->cudaStreamIsCapturing == nullptr) return true;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  // When in doubt, treat the stream as capturing: an extra event in a capture would break it.
  if (helpers->cudaStreamIsCapturing(stream, &status) != cudaSuccess) return true;
  return status != cudaStreamCaptureStatusNone;
}

void Recorder::learnRank(std::int32_t rank, std::int32_t world_size) noexcept {
  std::int32_t unknown = -1;
  if (rank_.compare_exchange_strong(unknown, rank, std::memory_order_relaxed)) {
    unknown = -1;
    world_size_.compare_exchange_strong(unknown, world_size, std::memory_order_relaxed);
  }
}

void Recorder::shutdown() noexcept {
  recording_.store(false, std::memory_order_release);
  if (background_ != nullptr) background_->stopAndJoin();
}

bool Recorder::shutdownWithin(std::int64_t limit_ns) noexcept {
  recording_.store(false, std::memory_order_release);
  if (background_ == nullptr) return true;
  const std::int64_t now = monotonicNs();
  // Half the time for the GPU at most: the rest is for writing and closing the store.
  return background_->stopWithin(now + limit_ns, now + limit_ns / 2);
}

}  // namespace syncopate::preload
