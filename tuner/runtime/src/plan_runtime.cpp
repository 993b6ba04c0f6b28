#include "plan_runtime.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "syncopate/dispatch/log.hpp"
#include "syncopate/tuner_runtime/runtime_layer.hpp"
#include "syncopate/tuner/agreement.hpp"

namespace syncopate::preload {

namespace {

// Calls the runtime makes itself (and whatever NCCL or the recorder make inside them) must
// reach the layer below untouched.
thread_local int t_depth = 0;
// This thread's role: 0 not known yet, 1 the owner (the scheduler's thread), 2 another thread.
thread_local int t_role = 0;

struct Inside {
  Inside() noexcept { ++t_depth; }
  ~Inside() { --t_depth; }
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;
};

constexpr std::int64_t kDefaultWatchdogSeconds = 300;

std::int64_t nowNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

cudaStream_t streamOf(tuner::StreamHandle h) noexcept { return reinterpret_cast<cudaStream_t>(h); }
tuner::StreamHandle handleOf(cudaStream_t s) noexcept { return reinterpret_cast<tuner::StreamHandle>(s); }

ncclDataType_t ncclType(trace::DataType t) noexcept { return static_cast<ncclDataType_t>(static_cast<int>(t)); }
ncclRedOp_t ncclOp(trace::RedOp op) noexcept { return static_cast<ncclRedOp_t>(static_cast<int>(op)); }
ncclComm_t commOf(const tuner::CollectiveArgs& a) noexcept { return reinterpret_cast<ncclComm_t>(a.comm); }

std::int64_t watchdogSeconds() noexcept {
  const char* text = std::getenv("SYNCOPATE_WATCHDOG_S");
  if (text == nullptr || *text == '\0') return kDefaultWatchdogSeconds;
  std::int64_t value = 0;
  const char* end = text;
  while (*end != '\0') ++end;
  auto [ptr, error] = std::from_chars(text, end, value);
  if (error != std::errc{} || ptr != end || value <= 0) {
    log(LogLevel::Warn, "runtime: SYNCOPATE_WATCHDOG_S=%s is not a positive number of seconds; using %lld", text,
        static_cast<long long>(kDefaultWatchdogSeconds));
    return kDefaultWatchdogSeconds;
  }
  return value;
}

}  // namespace

RuntimeNext& runtimeNext() noexcept {
  static constinit RuntimeNext next;
  return next;
}

PlanRuntime& PlanRuntime::instance() noexcept {
  // Never destroyed: the process's last CUDA calls (from atexit handlers of the program or of
  // other libraries) may still come through the layer.
  static PlanRuntime* runtime = new PlanRuntime();
  return *runtime;
}

PlanRuntime* PlanRuntime::forCall() noexcept {
  if (t_depth > 0) return nullptr;
  PlanRuntime& rt = instance();
  if (rt.state_.load(std::memory_order_acquire) == State::Off) return nullptr;
  if (t_role == 0) {
    std::uint64_t expected = 0;
    const auto me = reinterpret_cast<std::uint64_t>(&t_role);
    t_role = rt.owner_.compare_exchange_strong(expected, me) || expected == me ? 1 : 2;
  }
  if (t_role != 1) {
    rt.foreignCall();
    return nullptr;
  }
  if (!rt.activate()) return nullptr;
  return &rt;
}

// The second thread's first call stops the plan before it passes through: the program may have
// ordered it after the owner's calls (a join, a lock, a queue), so what the plan holds must be
// issued and what it moved waited for, as in the original order. The owner is kept out of the
// scheduler meanwhile by a flag each side raises before it looks at the other's (Dekker: with
// sequentially consistent accesses at least one of them sees the other's).
void PlanRuntime::foreignCall() noexcept {
  if (foreign_stopped_.load(std::memory_order_acquire)) return;
  if (!foreign_.exchange(true, std::memory_order_seq_cst)) {
    // The owner may be inside a call; it does not enter again once it sees foreign_.
    for (long pause = 1'000; owner_busy_.load(std::memory_order_seq_cst); pause = std::min(pause * 2, 1'000'000L)) {
      timespec ts{0, pause};
      nanosleep(&ts, nullptr);
    }
    {
      Inside inside;
      if (scheduler_) {
        stopFor(tuner::Fallback::ForeignThread);
      } else {
        tuner::Call none;
        none.kind = tuner::CallKind::Barrier;
        fallback(tuner::Fallback::ForeignThread, none);
      }
    }
    foreign_stopped_.store(true, std::memory_order_release);
    return;
  }
  waitForeignStopped();
}

void PlanRuntime::waitForeignStopped() noexcept {
  for (long pause = 1'000; !foreign_stopped_.load(std::memory_order_acquire); pause = std::min(pause * 2, 1'000'000L)) {
    timespec ts{0, pause};
    nanosleep(&ts, nullptr);
  }
}

bool PlanRuntime::enterScheduler() noexcept {
  owner_busy_.store(true, std::memory_order_seq_cst);
  if (!foreign_.load(std::memory_order_seq_cst)) [[likely]] return true;
  owner_busy_.store(false, std::memory_order_release);
  waitForeignStopped();
  return false;
}

void PlanRuntime::leaveScheduler() noexcept { owner_busy_.store(false, std::memory_order_release); }

bool PlanRuntime::activate() noexcept {
  std::call_once(activation_, [this] {
    const char* path = std::getenv("SYNCOPATE_PLAN");
    plan_path_ = path != nullptr ? path : "";
    std::atexit(&PlanRuntime::atExit);
    watchdog_ns_ = watchdogSeconds() * 1'000'000'000;
    try {
      auto plan = tuner::readPlan(plan_path_);
      if (!plan.ok()) {
        disabled_reason_ = plan.error().message;
      } else if (plan->changesTrainingMathematics()) {
        disabled_reason_ = "the plan uses the one-step-delayed mode, which changes the training mathematics; the "
                           "runtime does not apply it";
      } else {
        rules_ = plan->rules();
        plan_ = std::move(plan).value();
      }
    } catch (...) {
      disabled_reason_ = "out of memory while reading the plan";
    }
    if (!plan_) {
      ++said_[static_cast<std::size_t>(tuner::Fallback::PlanUnusable)];
      log(LogLevel::Error, "runtime: %s; the job runs unchanged", disabled_reason_.c_str());
      state_.store(State::Off, std::memory_order_release);
      return;
    }
    log(LogLevel::Info, "runtime: applying %s (%s)", plan_path_.c_str(), tuner::describe(plan_->knobs).c_str());
    state_.store(State::Active, std::memory_order_release);
  });
  return state_.load(std::memory_order_acquire) == State::Active;
}

bool PlanRuntime::ensureScheduler() noexcept {
  if (scheduler_) [[likely]] return true;
  const CudartHelpers* helpers = cudartHelpers();
  const CudartTable* real = realCudart();
  if (helpers == nullptr || real == nullptr || runtimeNext().cudart == nullptr) return false;
  Inside inside;
  if (helpers->cudaGetDevice == nullptr || helpers->cudaGetDevice(&device_) != cudaSuccess) device_ = 0;
  // The runtime's own agreement between ranks goes through buffers and a stream nobody records.
  if (real->cudaMalloc(reinterpret_cast<void**>(&consensus_device_), 2 * sizeof(std::uint64_t)) != cudaSuccess ||
      real->cudaMallocHost(reinterpret_cast<void**>(&consensus_host_), 2 * sizeof(std::uint64_t)) != cudaSuccess ||
      helpers->cudaStreamCreateWithFlags(&consensus_stream_, cudaStreamNonBlocking) != cudaSuccess ||
      helpers->cudaEventCreateWithFlags(&consensus_event_, cudaEventDisableTiming) != cudaSuccess) {
    disabled_reason_ = "the runtime could not allocate its buffers and streams";
    log(LogLevel::Error, "runtime: %s; the job runs unchanged", disabled_reason_.c_str());
    state_.store(State::Off, std::memory_order_release);
    return false;
  }
  try {
    scheduler_.emplace(rules_, *this);
    watchdog_ = std::thread([this] { watchdogLoop(); });
  } catch (...) {
    disabled_reason_ = "out of memory while starting the runtime";
    log(LogLevel::Error, "runtime: %s; the job runs unchanged", disabled_reason_.c_str());
    state_.store(State::Off, std::memory_order_release);
    return false;
  }
  if (comm_stream_ == nullptr || join_stream_ == nullptr) stopFor(tuner::Fallback::PlanUnusable);
  return true;
}

int PlanRuntime::run(const tuner::Call& call, const Original& original) noexcept {
  // A second thread stopped the plan: the original order from here on, the scheduler left alone.
  if (!enterScheduler()) {
    Inside inside;
    return original(call.stream);
  }
  if (!ensureScheduler()) {
    leaveScheduler();
    Inside inside;
    return original(call.stream);
  }
  current_ = &original;
  result_ = 0;
  scheduler_->onCall(call);
  current_ = nullptr;
  leaveScheduler();
  return result_;
}

void PlanRuntime::stopFor(tuner::Fallback why) noexcept {
  if (!scheduler_ || !scheduler_->active()) return;
  tuner::Call none;
  none.kind = tuner::CallKind::Barrier;
  scheduler_->stop(why, none);
}

void PlanRuntime::selectingDevice(int device) noexcept {
  if (!enterScheduler()) return;
  if (scheduler_ && device != device_) {
    Inside inside;
    stopFor(tuner::Fallback::MultipleDevices);
  }
  leaveScheduler();
}

// ---- communicators --------------------------------------------------------------------------

void PlanRuntime::communicatorCreated(ncclComm_t comm, int rank, int nranks) noexcept {
  if (state_.load(std::memory_order_acquire) == State::Off || comm == nullptr) return;
  std::lock_guard lock(comm_mutex_);
  const int n = comm_count_.load(std::memory_order_relaxed);
  if (n == kMaxCommunicators) {
    log(LogLevel::Warn, "runtime: more than %d communicators; the others are not rescheduled", kMaxCommunicators);
    return;
  }
  Communicator& c = comms_[n];
  c.comm = comm;
  c.rank = rank;
  c.size = nranks;
  if (rank_ < 0) rank_ = rank;
  // Its twin carries only the runtime's agreement between ranks. Made now, while every rank is
  // inside the communicator's creation, so that no rank can be elsewhere.
  if (const NcclTable* real = realNccl(); real != nullptr && real->ncclCommSplit != nullptr) {
    Inside inside;
    if (real->ncclCommSplit(comm, 0, rank, &c.consensus, nullptr) != ncclSuccess) c.consensus = nullptr;
  }
  comm_count_.store(n + 1, std::memory_order_release);
}

PlanRuntime::Communicator* PlanRuntime::findCommunicator(ncclComm_t comm) noexcept {
  const int n = comm_count_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (comms_[i].comm == comm) return &comms_[i];
  return nullptr;
}

std::uint32_t PlanRuntime::communicatorIndex(ncclComm_t comm) noexcept {
  Communicator* c = findCommunicator(comm);
  if (c == nullptr) return 0xFFFFFFFFu;
  // Numbered in order of first use, as the what-if model numbers them in the recording.
  if (c->index == 0xFFFFFFFFu) c->index = next_comm_index_++;
  return c->index;
}

int PlanRuntime::communicatorSize(ncclComm_t comm) noexcept {
  Communicator* c = findCommunicator(comm);
  if (c != nullptr) return c->size;
  int size = 0;
  if (const NcclHelpers* helpers = ncclHelpers(); helpers != nullptr && helpers->ncclCommCount != nullptr) {
    helpers->ncclCommCount(comm, &size);
  }
  return size;
}

void PlanRuntime::note(ncclResult_t result, const char* what) noexcept {
  if (result == ncclSuccess) return;
  ncclResult_t expected = ncclSuccess;
  if (sticky_.compare_exchange_strong(expected, result)) {
    log(LogLevel::Error, "runtime: %s failed (NCCL error %d); the application's next NCCL call reports it", what,
        static_cast<int>(result));
  }
}

// ---- the executor -----------------------------------------------------------------------------

bool PlanRuntime::prepareEvents(std::uint32_t count) {
  const CudartHelpers* helpers = cudartHelpers();
  events_.assign(count, nullptr);
  for (cudaEvent_t& e : events_) {
    if (helpers->cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) return false;
  }
  return true;
}

tuner::StreamHandle PlanRuntime::communicationStream() {
  // The highest priority the device offers: its all-reduces never wait behind the
  // application's streams for an engine.
  int least = 0, greatest = 0;
  using RangeFn = cudaError_t (*)(int*, int*);
  if (auto range = reinterpret_cast<RangeFn>(resolveRealCudart("cudaDeviceGetStreamPriorityRange")); range != nullptr) {
    if (range(&least, &greatest) != cudaSuccess) greatest = 0;
  }
  if (runtimeNext().cudart->cudaStreamCreateWithPriority(&comm_stream_, cudaStreamNonBlocking, greatest) != cudaSuccess) {
    comm_stream_ = nullptr;
  }
  return handleOf(comm_stream_);
}

tuner::StreamHandle PlanRuntime::joinStream() {
  if (runtimeNext().cudart->cudaStreamCreateWithFlags(&join_stream_, cudaStreamNonBlocking) != cudaSuccess) {
    join_stream_ = nullptr;
  }
  return handleOf(join_stream_);
}

void PlanRuntime::passthrough(const tuner::Call& call) {
  Inside inside;
  result_ = (*current_)(call.stream);
}

void PlanRuntime::recordApplicationEvent(const tuner::Call&, tuner::StreamHandle stream) {
  Inside inside;
  result_ = (*current_)(stream);
}

void PlanRuntime::issueHeld(const tuner::HeldCollective& h) {
  Inside inside;
  const tuner::CollectiveArgs& a = h.args;
  note(runtimeNext().nccl->ncclAllReduce(reinterpret_cast<const void*>(a.send), reinterpret_cast<void*>(a.recv), a.count,
                                         ncclType(a.dtype), ncclOp(a.op), commOf(a), streamOf(h.stream)),
       "an all-reduce issued in its original order");
}

void PlanRuntime::recordEvent(tuner::EventSlot event, tuner::StreamHandle stream) {
  Inside inside;
  runtimeNext().cudart->cudaEventRecord(events_[event], streamOf(stream));
  if (expect_unit_done_) {
    expect_unit_done_ = false;
    last_unit_slot_.store(event, std::memory_order_relaxed);
    last_unit_ns_.store(nowNs(), std::memory_order_release);
  }
}

void PlanRuntime::waitEvent(tuner::StreamHandle stream, tuner::EventSlot event) {
  Inside inside;
  runtimeNext().cudart->cudaStreamWaitEvent(streamOf(stream), events_[event], 0);
}

void PlanRuntime::hostWait(tuner::EventSlot event) {
  Inside inside;
  runtimeNext().cudart->cudaEventSynchronize(events_[event]);
}

void PlanRuntime::queryWith(const tuner::Call& call, tuner::EventSlot also) {
  Inside inside;
  const cudaError_t pending = cudartHelpers()->cudaEventQuery(events_[also]);
  result_ = pending == cudaErrorNotReady ? static_cast<int>(cudaErrorNotReady) : (*current_)(call.stream);
}

void PlanRuntime::issueUnit(const tuner::UnitIssue& unit) {
  Inside inside;
  const NcclTable& nccl = *runtimeNext().nccl;
  const CudartTable& cudart = *runtimeNext().cudart;
  const tuner::CollectiveArgs& first = unit.members.front().args;
  const std::uint64_t elem = trace::dataTypeSize(first.dtype);
  const cudaStream_t stream = streamOf(unit.stream);
  expect_unit_done_ = true;
  if (unit.contiguous) {
    note(nccl.ncclAllReduce(reinterpret_cast<const void*>(first.send + unit.offset * elem),
                            reinterpret_cast<void*>(first.recv + unit.offset * elem), unit.count, ncclType(first.dtype),
                            ncclOp(first.op), commOf(first), stream),
         "a fused all-reduce");
    return;
  }
  // Members apart in memory: through the fusion buffer (grown at the first bucket that needs
  // more, a rare and synchronising allocation).
  const std::size_t bytes = unit.count * elem;
  if (bytes > fusion_bytes_) {
    if (fusion_buffer_ != nullptr) realCudart()->cudaFree(fusion_buffer_);
    fusion_buffer_ = nullptr;
    fusion_bytes_ = 0;
    if (realCudart()->cudaMalloc(&fusion_buffer_, bytes) != cudaSuccess) {
      fusion_buffer_ = nullptr;
      note(ncclSystemError, "allocating the fusion buffer");
      return;
    }
    fusion_bytes_ = bytes;
  }
  auto* buffer = static_cast<unsigned char*>(fusion_buffer_);
  auto eachSlice = [&](auto&& copy) {
    std::uint64_t at = 0;
    for (const tuner::HeldCollective& m : unit.members) {
      const std::uint64_t lo = std::max(at, unit.offset);
      const std::uint64_t hi = std::min(at + m.args.count, unit.offset + unit.count);
      if (hi > lo) copy(m.args, (lo - unit.offset) * elem, (lo - at) * elem, (hi - lo) * elem);
      at += m.args.count;
    }
  };
  eachSlice([&](const tuner::CollectiveArgs& m, std::uint64_t in_buffer, std::uint64_t in_member, std::uint64_t n) {
    cudart.cudaMemcpyAsync(buffer + in_buffer, reinterpret_cast<const void*>(m.send + in_member), n,
                           cudaMemcpyDeviceToDevice, stream);
  });
  note(nccl.ncclAllReduce(buffer, buffer, unit.count, ncclType(first.dtype), ncclOp(first.op), commOf(first), stream),
       "a fused all-reduce");
  eachSlice([&](const tuner::CollectiveArgs& m, std::uint64_t in_buffer, std::uint64_t in_member, std::uint64_t n) {
    cudart.cudaMemcpyAsync(reinterpret_cast<void*>(m.recv + in_member), buffer + in_buffer, n, cudaMemcpyDeviceToDevice,
                           stream);
  });
}

bool PlanRuntime::agree(std::uint64_t digest, std::span<const tuner::HeldCollective> group) {
  // The group's communicators, each once (groups span one in practice).
  ncclComm_t seen[8] = {};
  int count = 0;
  for (const tuner::HeldCollective& h : group) {
    const ncclComm_t c = commOf(h.args);
    bool known = false;
    for (int i = 0; i < count; ++i) known = known || seen[i] == c;
    if (known) continue;
    if (count == 8) return false;
    seen[count++] = c;
  }
  const CudartTable* real = realCudart();
  const NcclTable* nccl = realNccl();
  const CudartHelpers* helpers = cudartHelpers();
  const NcclHelpers* nccl_helpers = ncclHelpers();
  // The twin's own error: a peer that died or left fails it (real NCCL may never complete the
  // collective then; simgpu completes it as failed). Success or still initialising is no error.
  const auto twinError = [&](ncclComm_t twin) {
    ncclResult_t state = ncclSuccess;
    if (nccl_helpers == nullptr || nccl_helpers->ncclCommGetAsyncError == nullptr) return ncclSuccess;
    const ncclResult_t asked = nccl_helpers->ncclCommGetAsyncError(twin, &state);
    if (asked != ncclSuccess) return asked;
    return state == ncclInProgress ? ncclSuccess : state;
  };
  bool all = true;
  for (int i = 0; i < count; ++i) {
    Communicator* c = findCommunicator(seen[i]);
    // Without a twin every rank answers no (the program is the same on every rank).
    if (c == nullptr || c->consensus == nullptr) return false;
    Inside inside;
    consensus_host_[0] = digest;
    consensus_host_[1] = ~digest;
    consensus_since_ns_.store(nowNs(), std::memory_order_release);
    real->cudaMemcpyAsync(consensus_device_, consensus_host_, 2 * sizeof(std::uint64_t), cudaMemcpyHostToDevice,
                          consensus_stream_);
    // max(d) == d and max(~d) == ~d on every rank exactly when every rank passed d.
    ncclResult_t failed = nccl->ncclAllReduce(consensus_device_, consensus_device_, 2, ncclUint64, ncclMax,
                                              c->consensus, consensus_stream_);
    real->cudaMemcpyAsync(consensus_host_, consensus_device_, 2 * sizeof(std::uint64_t), cudaMemcpyDeviceToHost,
                          consensus_stream_);
    real->cudaEventRecord(consensus_event_, consensus_stream_);
    // Poll rather than block, backing off: a failed peer ends the wait at once, the watchdog a
    // wait that never ends.
    cudaError_t completion = cudaErrorNotReady;
    for (long pause = 2'000; failed == ncclSuccess; pause = std::min(pause * 2, 1'000'000L)) {
      completion = helpers->cudaEventQuery(consensus_event_);
      failed = twinError(c->consensus);
      if (completion != cudaErrorNotReady) break;
      timespec ts{0, pause};
      nanosleep(&ts, nullptr);
    }
    const std::int64_t waited = nowNs() - consensus_since_ns_.load(std::memory_order_relaxed);
    const bool completed = failed == ncclSuccess && completion == cudaSuccess;
    const tuner::Agreement outcome = tuner::agreementOutcome(completed, digest, consensus_host_[0], consensus_host_[1]);
    if (outcome == tuner::Agreement::PeerFailed) peerFailed(failed, completion, waited);
    consensus_since_ns_.store(0, std::memory_order_release);
    ++consensus_calls_;
    consensus_ns_ += waited;
    consensus_max_ns_ = std::max(consensus_max_ns_, waited);
    all = all && outcome == tuner::Agreement::Agreed;
  }
  return all;
}

// Not a disagreement: the ranks' call sequences are not known to differ, the others can no
// longer be reached. Going on in the original order would only meet the same failure in the
// application's next collective, so the rank stops as the watchdog stops it: one clear line,
// the report written, a non-zero exit.
void PlanRuntime::peerFailed(ncclResult_t failed, cudaError_t completion, std::int64_t waited_ns) noexcept {
  const NcclHelpers* helpers = ncclHelpers();
  char cause[160];
  if (failed != ncclSuccess) {
    const char* text = helpers != nullptr && helpers->ncclGetErrorString != nullptr ? helpers->ncclGetErrorString(failed) : "";
    std::snprintf(cause, sizeof cause, "NCCL error %d: %s", static_cast<int>(failed), text);
  } else {
    std::snprintf(cause, sizeof cause, "CUDA error %d on its stream", static_cast<int>(completion));
  }
  char message[512];
  std::snprintf(message, sizeof message,
                "runtime (rank %d): the agreement between ranks at a flush failed after %.3f s (%s); another rank has "
                "died or left. Stopping this rank instead of hanging",
                rank_, static_cast<double>(waited_ns) / 1e9, cause);
  fire(message);
}

void PlanRuntime::fallback(tuner::Fallback why, const tuner::Call& call) {
  const auto code = static_cast<std::size_t>(why);
  if (said_[code]++ > 0) return;
  // The legacy stream only makes the runtime wait (set-up copies do it): worth a note, not a warning.
  const LogLevel level = why == tuner::Fallback::LegacyStream ? LogLevel::Info : LogLevel::Warn;
  log(level, "runtime (rank %d): %s [first: %s on stream %#llx]", rank_, std::string(tuner::describe(why)).c_str(),
      std::string(tuner::toString(call.kind)).c_str(), static_cast<unsigned long long>(call.stream));
  // No scheduler yet: it failed to start (its events), or a second thread came first.
  if ((!scheduler_ || !scheduler_->active()) && disabled_reason_.empty()) disabled_reason_ = std::string(tuner::describe(why));
}

// ---- watchdog and report ----------------------------------------------------------------------

void PlanRuntime::watchdogLoop() noexcept {
  std::unique_lock lock(watchdog_mutex_);
  while (!exiting_.load(std::memory_order_acquire)) {
    watchdog_wake_.wait_for(lock, std::chrono::milliseconds(250));
    if (exiting_.load(std::memory_order_acquire)) break;
    const std::int64_t now = nowNs();
    const std::int64_t since = consensus_since_ns_.load(std::memory_order_acquire);
    char message[512];
    if (since != 0 && now - since > watchdog_ns_) {
      std::snprintf(message, sizeof message,
                    "runtime (rank %d): waited %lld s for the other ranks to agree on the plan at a flush; a rank has "
                    "died or is stuck elsewhere. Stopping this rank instead of hanging",
                    rank_, static_cast<long long>((now - since) / 1'000'000'000));
      fire(message);
    }
    const std::int64_t issued = last_unit_ns_.load(std::memory_order_acquire);
    if (issued != 0 && now - issued > watchdog_ns_) {
      const cudaEvent_t done = events_[last_unit_slot_.load(std::memory_order_relaxed)];
      if (cudartHelpers()->cudaEventQuery(done) == cudaErrorNotReady) {
        std::snprintf(message, sizeof message,
                      "runtime (rank %d): an all-reduce the plan issued has not completed for %lld s; a rank has died "
                      "or the ranks' schedules diverged. Stopping this rank instead of hanging",
                      rank_, static_cast<long long>((now - issued) / 1'000'000'000));
        fire(message);
      }
    }
  }
}

// How long a stopped rank gives the recorder to write what it recorded and close the store.
constexpr std::int64_t kRecorderStopNs = 2'000'000'000;

// `_Exit`, not `exit`: exit handlers may wait on the hung work. The recorder's is the one that
// matters (nothing already recorded may be lost), so the other layers' bounded stop comes first.
void PlanRuntime::fire(const char* message) noexcept {
  if (fired_.exchange(true)) {
    // The other thread that fired is closing the store and ends the process within its limit.
    std::this_thread::sleep_for(std::chrono::nanoseconds(kRecorderStopNs + 1'000'000'000));
    std::_Exit(3);
  }
  log(LogLevel::Error, "%s", message);
  writeReport(message);
  if (stopOtherLayersWithin(kTunerRuntimeLayer, kRecorderStopNs) == LayerStop::TimedOut) {
    log(LogLevel::Error,
        "runtime (rank %d): the recorder did not finish writing this rank's store within %lld s; what it had not "
        "committed yet is lost",
        rank_, static_cast<long long>(kRecorderStopNs / 1'000'000'000));
  }
  std::_Exit(3);
}

void PlanRuntime::writeReport(const char* watchdog_message) noexcept {
  const char* dir = std::getenv("SYNCOPATE_OUTPUT_DIR");
  if (dir == nullptr || *dir == '\0') return;
  try {
    nlohmann::json j;
    j["plan"] = plan_path_;
    j["checksum"] = plan_ ? fmt::format("{:016x}", plan_->checksum) : std::string();
    j["rank"] = rank_;
    j["applied"] = scheduler_.has_value() && scheduler_->active();
    j["disabled_reason"] = disabled_reason_;
    if (scheduler_) {
      const tuner::SchedulerStats& s = scheduler_->stats();
      j["stats"] = {{"calls", s.calls},
                    {"held", s.held},
                    {"planned_groups", s.planned_groups},
                    {"unplanned_groups", s.unplanned_groups},
                    {"units", s.units},
                    {"producer_waits", s.producer_waits},
                    {"position_waits", s.position_waits},
                    {"deferred_waits", s.deferred_waits},
                    {"joins", s.joins},
                    {"agreements", consensus_calls_}};
      // Apart from the counters, which are the same on every rank (invariant 1): this is timing.
      j["agreement_ms"] = {{"total", static_cast<double>(consensus_ns_) / 1e6},
                           {"max", static_cast<double>(consensus_max_ns_) / 1e6}};
    }
    nlohmann::json fallbacks = nlohmann::json::object();
    for (int i = 0; i < tuner::kFallbackCount; ++i) {
      const auto why = static_cast<tuner::Fallback>(i);
      const std::uint64_t n = scheduler_ ? scheduler_->stats().fallbacks[static_cast<std::size_t>(i)] : said_[static_cast<std::size_t>(i)];
      if (n > 0) fallbacks[std::string(tuner::toString(why))] = {{"count", n}, {"why", tuner::describe(why)}};
    }
    j["fallbacks"] = fallbacks;
    j["watchdog"] = watchdog_message != nullptr ? nlohmann::json(watchdog_message) : nlohmann::json(nullptr);
    const std::string name = rank_ >= 0 ? fmt::format("runtime-rank-{}.json", rank_) : fmt::format("runtime-pid-{}.json", getpid());
    std::ofstream out(std::string(dir) + "/" + name, std::ios::trunc);
    out << j.dump(2) << "\n";
  } catch (...) {
    log(LogLevel::Warn, "runtime: could not write the runtime report");
  }
}

void PlanRuntime::atExit() noexcept {
  PlanRuntime& rt = instance();
  rt.exiting_.store(true, std::memory_order_release);
  rt.watchdog_wake_.notify_all();
  if (rt.watchdog_.joinable()) rt.watchdog_.join();
  if (!rt.fired_.load()) rt.writeReport(nullptr);
}

}  // namespace syncopate::preload
