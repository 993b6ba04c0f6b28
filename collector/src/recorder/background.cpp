#include "recorder/background.hpp"

#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>
#include <vector>

#include "common/clock.hpp"
#include "syncopate/dispatch/log.hpp"
#include "attach/control_channel.hpp"
#include "attach/iteration_window.hpp"
#include "syncopate/dispatch/chain.hpp"
#include "syncopate/dispatch/kernel_registry.hpp"
#include "syncopate/dispatch/proc_address.hpp"
#include "recorder/nccl_profiler.hpp"
#include "syncopate/collector/nccl_tuner_note.hpp"
#include "recorder/recorder.hpp"
#include "syncopate/trace/diagnostics.hpp"
#include "syncopate/trace/writer.hpp"
#include "syncopate/collector/stream_order.hpp"

namespace syncopate::preload {
namespace {

constexpr std::int64_t kPollIntervalNs = 5'000'000;
// How long the final drain waits for the GPU to finish what was issued.
constexpr std::int64_t kFinalDrainNs = 10'000'000'000;
// How long after a window settled the timing backend stops collecting, so that a call that saw
// the window open and is still inside the real API has pushed its op (and its work's times come).
constexpr std::int64_t kStopCollectingAfterNs = 100'000'000;

}  // namespace

struct BackgroundThread::State {
  explicit State(Recorder& recorder) : window(recorder.config().iteration_marker) {}

  std::unique_ptr<trace::StoreWriter> writer;
  bool store_failed = false;
  bool nccl_profiler_noted = false;   // meta.nccl_profiler written
  bool nccl_profiler_loaded = false;  // what it says
  double channel_bandwidth_noted = 0;  // meta.nccl_per_channel_bandwidth as written
  bool disk_problem_reported = false;
  std::optional<bool> host_clock_tsc_noted;  // meta.host_clock as written
  std::int32_t rank_in_store = -1;
  StreamOrder order;
  // Host synchronizes that succeeded, drained in the last pass over the rings and in this one:
  // stream order learns what one proves only a pass after it was drained, once every ring has
  // been drained again and so holds nothing issued before the synchronize began.
  std::vector<trace::OpRecord> syncs_drained_before;
  std::vector<trace::OpRecord> syncs_drained_now;
  std::vector<trace::Record> batch;
  std::vector<trace::Record> resolved;
  std::int64_t last_flush_ns = 0;
  std::uint32_t streams_seen = 0;
  std::unordered_set<int> devices;
  IterationWindow window;
  std::unique_ptr<ControlChannel> control;
  std::uint64_t settled_request = 0;  // the last attach request whose data is all committed
  std::int64_t stop_collecting_at_ns = 0;  // once a window settled: when the backend may stop collecting
};

BackgroundThread* BackgroundThread::start(Recorder& recorder) noexcept {
  try {
    auto* background = new BackgroundThread(recorder);
    if (recorder.config().armed) {
      background->state_->control = ControlChannel::open(recorder, background->state_->window);
    }
    background->thread_ = std::thread([background] { background->run(); });
    return background;
  } catch (...) {
    return nullptr;
  }
}

BackgroundThread::BackgroundThread(Recorder& recorder) : recorder_(recorder), state_(std::make_unique<State>(recorder)) {}

IterationWindow* BackgroundThread::window() noexcept { return &state_->window; }

void BackgroundThread::requestFlush() noexcept {
  std::lock_guard lock(mutex_);
  flush_requested_ = true;
  wake_.notify_one();
}

void BackgroundThread::stopAndJoin() noexcept {
  {
    std::lock_guard lock(mutex_);
    if (stop_) return;
    stop_ = true;
    gpu_deadline_ns_ = monotonicNs() + kFinalDrainNs;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

bool BackgroundThread::settle(std::int64_t deadline_ns) noexcept {
  std::unique_lock lock(mutex_);
  if (stop_) return false;
  const std::uint64_t asked = ++settles_asked_;
  settle_wake_ = true;
  wake_.notify_one();
  const auto left = std::chrono::nanoseconds(std::max<std::int64_t>(deadline_ns - monotonicNs(), 0));
  settled_cv_.wait_for(lock, left, [&] { return settles_answered_ >= asked || finished_; });
  return settles_answered_ >= asked;
}

bool BackgroundThread::stopWithin(std::int64_t deadline_ns, std::int64_t gpu_deadline_ns) noexcept {
  std::unique_lock lock(mutex_);
  if (!stop_) {
    stop_ = true;
    gpu_deadline_ns_ = gpu_deadline_ns;
    wake_.notify_one();
  }
  // Not joined: the process ends right after, and a thread stuck in a hung GPU call never returns.
  const auto left = std::chrono::nanoseconds(std::max<std::int64_t>(deadline_ns - monotonicNs(), 0));
  return finished_cv_.wait_for(lock, left, [this] { return finished_; });
}

namespace {

// Records from a thread's ring: pending ops go to stream order, everything else to the batch;
// the host synchronizes that succeeded are also kept for stream order (`syncs`).
struct DrainedCall {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int32_t result = 0;
};
void sortDrained(std::span<const trace::Record> records, std::vector<trace::Record>& batch, StreamOrder& order,
                 std::vector<trace::OpRecord>& syncs, DrainedCall& last_call) {
  for (const trace::Record& record : records) {
    if (record.type() == trace::RecordType::ApiCall) {
      // A call's two readings may come from two sources (the TSC's line and the vDSO, when a
      // line was being replaced or had run out: common/clock.hpp), which may disagree by the
      // line's error; a call never ends before it starts.
      auto call = record.as<trace::ApiCallRecord>();
      call.end_ns = std::max(call.end_ns, call.start_ns);
      last_call = {call.start_ns, call.end_ns, call.result};
      batch.push_back(call);
      continue;
    } else if (record.type() == trace::RecordType::Op) {
      trace::OpRecord op = record.as<trace::OpRecord>();
      if (op.start_ns == 0) {
        order.add(op, last_call.start_ns, last_call.end_ns);
        continue;
      }
      // CUDA_SUCCESS and cudaSuccess alike: a synchronize that failed proves nothing.
      if (op.kind == trace::OpKind::HostSync && last_call.result == 0) syncs.push_back(op);
    }
    batch.push_back(record);
  }
}

}  // namespace

void BackgroundThread::createStore() {
  State& s = *state_;
  const ProcessIdentity& identity = recorder_.identity();
  trace::StoreIdentity store_identity;
  store_identity.host = identity.host;
  store_identity.pid = identity.pid;
  // Read once: an application thread may learn the rank meanwhile (the store is renamed then).
  const std::int32_t rank = recorder_.rank();
  if (rank >= 0) store_identity.rank = rank;
  auto created = trace::StoreWriter::create(recorder_.config().output_dir, store_identity, recorder_.catalog());
  if (!created.ok()) {
    s.store_failed = true;
    recorder_.setRecording(false);
    std::string message = "cannot create this process's store in " + recorder_.config().output_dir + ": " +
                          created.message() + "; this process is not recorded (the job continues)";
    log(LogLevel::Error, "%s", message.c_str());
    if (s.control) s.control->setError(message);
    return;
  }
  s.writer = std::move(created.value());
  s.rank_in_store = rank;
  (void)s.writer->setMeta("backend", recorder_.timing().name());
  (void)s.writer->setMeta("backend_reason", recorder_.backendReason());
  (void)s.writer->setMeta("command", identity.command);
  if (!identity.cuda_device_max_connections.empty()) {
    (void)s.writer->setMeta("cuda_device_max_connections", identity.cuda_device_max_connections);
  }
  if (identity.local_rank) (void)s.writer->setMeta("local_rank", std::to_string(*identity.local_rank));
  if (recorder_.worldSize() >= 0) (void)s.writer->setMeta("world_size", std::to_string(recorder_.worldSize()));
  if (!identity.rank_source.empty()) (void)s.writer->setMeta("rank_source", identity.rank_source);
  (void)s.writer->setMeta("recording_mode", recorder_.config().armed ? "armed" : "continuous");
  (void)s.writer->setMeta("iteration_marker", recorder_.config().iteration_marker);
  noteNcclProfiler();
  noteChannelBandwidth();
}

// meta.nccl_per_channel_bandwidth: the most one ring channel moves, as NCCL told its tuner
// plugin (nccl_tuner_note.hpp), once a communicator exists.
void BackgroundThread::noteChannelBandwidth() {
  State& s = *state_;
  const NcclChannelBandwidth noted = notedChannelBandwidth();
  if (!s.writer || noted.bytes_per_second <= 0 || noted.bytes_per_second == s.channel_bandwidth_noted) return;
  s.channel_bandwidth_noted = noted.bytes_per_second;
  (void)s.writer->setMeta("nccl_per_channel_bandwidth", std::to_string(std::llround(noted.bytes_per_second)));
  (void)s.writer->setMeta("nccl_per_channel_bandwidth_nodes", std::to_string(noted.nodes));
}

// meta.nccl_profiler: whether NCCL loaded the collector as its profiler plugin (it does so when
// the first communicator is created, which may come after the store).
void BackgroundThread::noteNcclProfiler() {
  State& s = *state_;
  const bool loaded = ncclProfilerRanks() > 0;
  if (!s.writer || (s.nccl_profiler_noted && loaded == s.nccl_profiler_loaded)) return;
  s.nccl_profiler_noted = true;
  s.nccl_profiler_loaded = loaded;
  (void)s.writer->setMeta("nccl_profiler", loaded ? "loaded" : "not loaded");
}

void BackgroundThread::noteHostClock(bool tsc) {
  State& s = *state_;
  if (!s.writer || s.host_clock_tsc_noted == tsc) return;
  s.host_clock_tsc_noted = tsc;
  (void)s.writer->setMeta("host_clock", tsc ? "tsc" : "clock_gettime");
}

void BackgroundThread::drainRings() {
  State& s = *state_;
  std::swap(s.syncs_drained_before, s.syncs_drained_now);
  s.syncs_drained_now.clear();
  for (ThreadState* thread : recorder_.threadsSnapshot()) {
    bool exited = thread->exited.load(std::memory_order_acquire);
    DrainedCall last_call;
    s.batch.clear();
    thread->ring->drain([&](std::span<const trace::Record> records) {
      sortDrained(records, s.batch, s.order, s.syncs_drained_now, last_call);
    });
    if (s.writer && !s.batch.empty()) (void)s.writer->append(thread->thread_id, s.batch);
    if (exited && thread->ring->sizeApprox() == 0) recorder_.forgetThread(thread);
  }
  proveBySyncs(s.syncs_drained_before);
}

void BackgroundThread::proveBySyncs(std::vector<trace::OpRecord>& syncs) {
  const StreamOrder::DeviceOfStream device_of = [this](trace::StreamId stream) {
    const std::optional<trace::CatalogStream> info = recorder_.catalog().stream(stream);
    return info ? info->device : -1;
  };
  for (const trace::OpRecord& sync : syncs) state_->order.noteHostSync(sync, device_of);
  syncs.clear();
}

void BackgroundThread::describeNewDevices() {
  State& s = *state_;
  trace::Catalog& catalog = recorder_.catalog();
  std::uint32_t streams = catalog.streamCount();
  for (std::uint32_t id = s.streams_seen + 1; id <= streams; ++id) {
    auto stream = catalog.stream(id);
    if (!stream || !s.devices.insert(stream->device).second) continue;
    trace::CatalogDevice info;
    info.ordinal = stream->device;
    const CudartHelpers* helpers = cudartHelpers();
    cudaDeviceProp properties{};
    if (helpers != nullptr && helpers->cudaGetDeviceProperties != nullptr &&
        helpers->cudaGetDeviceProperties(&properties, stream->device) == cudaSuccess) {
      info.name_id = catalog.intern(properties.name);
      info.sm_count = properties.multiProcessorCount;
      info.memory_bytes = static_cast<std::int64_t>(properties.totalGlobalMem);
      char uuid[64];
      const auto* bytes = reinterpret_cast<const unsigned char*>(properties.uuid.bytes);
      std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                    bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]);
      info.uuid_id = catalog.intern(uuid);
    }
    char bus[32] = {};
    if (helpers != nullptr && helpers->cudaDeviceGetPCIBusId != nullptr &&
        helpers->cudaDeviceGetPCIBusId(bus, sizeof bus, stream->device) == cudaSuccess) {
      info.pci_bus_id_id = catalog.intern(bus);
    }
    catalog.registerDevice(info);
  }
  s.streams_seen = streams;
}

void BackgroundThread::flush(std::int64_t now_ns) {
  State& s = *state_;
  s.last_flush_ns = now_ns;
  if (!s.writer) return;
  const auto store = [&](trace::diagnostics::Key key, std::uint64_t value) {
    (void)s.writer->setCounter(trace::diagnostics::entry(key).key, static_cast<std::int64_t>(value));
  };
  RecorderCounters& counters = recorder_.counters();
#define SYNCOPATE_STORE_COUNTER(key) store(trace::diagnostics::key, counters.key.load(std::memory_order_relaxed));
  SYNCOPATE_RECORDER_COUNTERS(SYNCOPATE_STORE_COUNTER)
#undef SYNCOPATE_STORE_COUNTER
  store(trace::diagnostics::records_dropped_buffer_full, recorder_.ringStats().dropped);
  store(trace::diagnostics::kernel_registry_overflow, kernelRegistry().overflowCount());
  store(trace::diagnostics::driver_entry_points_untraced, untracedDriverEntryPoints());
  store(trace::diagnostics::ops_pending_gpu_time, s.order.pendingCount());
  trace::Status status = s.writer->flush();
  if (!status.ok() && !s.disk_problem_reported) {
    s.disk_problem_reported = true;
    log(LogLevel::Error, "writing %s failed: %s; the rows of that batch are lost and counted, recording goes on",
        s.writer->path().c_str(), status.message().c_str());
  } else if (status.ok() && s.disk_problem_reported) {
    s.disk_problem_reported = false;
    log(LogLevel::Warn, "writing %s works again", s.writer->path().c_str());
  }
}

void BackgroundThread::step(std::int64_t now_ns) {
  State& s = *state_;
  if (!s.writer && !s.store_failed && recorder_.everRecorded()) createStore();
  drainRings();
  TimingBackend& timing = recorder_.timing();
  timing.collect();
  s.resolved.clear();
  s.order.resolve(timing, s.resolved, recorder_.counters(), now_ns);
  if (s.writer && !s.resolved.empty()) (void)s.writer->append(trace::kNoThread, s.resolved);
  describeNewDevices();
  noteNcclProfiler();
  noteChannelBandwidth();
  if (const std::int32_t rank = recorder_.rank(); s.writer && rank != s.rank_in_store && rank >= 0) {
    s.rank_in_store = rank;
    (void)s.writer->setMeta("world_size", std::to_string(recorder_.worldSize()));
    trace::Status renamed = s.writer->setRank(s.rank_in_store);
    if (!renamed.ok()) log(LogLevel::Warn, "the store keeps its pid name: %s", renamed.message().c_str());
  }
  if (now_ns - s.last_flush_ns >= static_cast<std::int64_t>(recorder_.config().flush_interval_ms) * 1'000'000) {
    flush(now_ns);
  }
  if (s.control) {
    // A finished window is reported done only once everything it recorded is committed, so
    // that `syncopate attach` returns with the data in the stores.
    bool settled = true;
    if (s.window.state() == WindowState::Done && s.window.request() != s.settled_request) {
      settled = recorder_.ringStats().buffered == 0 && s.order.pendingCount() == 0;
      if (settled) {
        flush(now_ns);
        s.settled_request = s.window.request();
        s.stop_collecting_at_ns = now_ns + kStopCollectingAfterNs;
      }
    }
    s.control->poll(now_ns, settled);
    stopCollectingOnceIdle(now_ns);
  }
}

void BackgroundThread::stopCollectingOnceIdle(std::int64_t now_ns) {
  State& s = *state_;
  if (s.stop_collecting_at_ns == 0 || now_ns < s.stop_collecting_at_ns) return;
  // A call that saw the window open may still be on its way into a ring: look again later.
  if (recorder_.ringStats().buffered != 0 || s.order.pendingCount() != 0) {
    s.stop_collecting_at_ns = now_ns + kStopCollectingAfterNs;
    return;
  }
  s.stop_collecting_at_ns = 0;
  recorder_.stopCollectingWhileIdle();
}

void BackgroundThread::finish(std::int64_t gpu_deadline_ns) {
  State& s = *state_;
  if (!s.writer && !s.store_failed && recorder_.everRecorded()) createStore();
  noteHostClock(calibrateHostClock());
  drainRings();
  proveBySyncs(s.syncs_drained_now);  // every ring is drained: the last pass's syncs prove too
  TimingBackend& timing = recorder_.timing();
  timing.drain(gpu_deadline_ns);
  s.resolved.clear();
  s.order.resolve(timing, s.resolved, recorder_.counters(), monotonicNs(), /*drained=*/true);
  s.order.abandon(timing, recorder_.counters());
  if (s.writer && !s.resolved.empty()) (void)s.writer->append(trace::kNoThread, s.resolved);
  describeNewDevices();
  flush(monotonicNs());
  if (s.writer) {
    trace::Status closed = s.writer->close();
    if (!closed.ok()) log(LogLevel::Error, "closing the store failed: %s", closed.message().c_str());
  }
  if (s.control) s.control->close();
}

void BackgroundThread::run() noexcept {
  pthread_setname_np(pthread_self(), "syncopate-io");
  // This thread's own CUDA calls (event queries, device properties) must never count as
  // unsafe calls during another thread's stream capture in global mode.
  if (const CudartHelpers* helpers = cudartHelpers(); helpers != nullptr && helpers->cudaThreadExchangeStreamCaptureMode) {
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    (void)helpers->cudaThreadExchangeStreamCaptureMode(&mode);
  }
  try {
    noteHostClock(calibrateHostClock());
    state_->last_flush_ns = monotonicNs();
    std::int64_t gpu_deadline_ns = 0;
    std::uint64_t asked = 0;  // settle() calls made before this step
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait_for(lock, std::chrono::nanoseconds(kPollIntervalNs),
                       [this] { return stop_ || flush_requested_ || settle_wake_; });
        settle_wake_ = false;
        if (stop_) {
          gpu_deadline_ns = gpu_deadline_ns_;
          break;
        }
        asked = settles_asked_;
      }
      noteHostClock(calibrateHostClock());
      std::int64_t now = monotonicNs();
      step(now);
      bool flush_now = false;
      {
        std::lock_guard lock(mutex_);
        std::swap(flush_now, flush_requested_);
        // The step drained every record pushed before those calls.
        if (asked > settles_answered_ && state_->order.pendingCount() == 0) {
          settles_answered_ = asked;
          settled_cv_.notify_all();
        }
      }
      if (flush_now) flush(now);
    }
    finish(gpu_deadline_ns);
  } catch (...) {
    log(LogLevel::Error, "the background writer stopped (out of memory); what was flushed stays readable");
    recorder_.setRecording(false);
  }
  std::lock_guard lock(mutex_);
  finished_ = true;
  finished_cv_.notify_all();
  settled_cv_.notify_all();
}

}  // namespace syncopate::preload
