#include "plan_runtime.hpp"

#include "own_calls.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "syncopate/dispatch/log.hpp"
#include "syncopate/dispatch/nccl_threads.hpp"
#include "syncopate/tuner/sharded_fusion.hpp"
#include "syncopate/tuner_runtime/runtime_layer.hpp"

namespace syncopate::preload {

namespace {

cudaStream_t streamOf(tuner::StreamHandle h) noexcept { return reinterpret_cast<cudaStream_t>(h); }
tuner::StreamHandle handleOf(cudaStream_t s) noexcept { return reinterpret_cast<tuner::StreamHandle>(s); }

ncclDataType_t ncclType(trace::DataType t) noexcept { return static_cast<ncclDataType_t>(static_cast<int>(t)); }
ncclRedOp_t ncclOp(trace::RedOp op) noexcept { return static_cast<ncclRedOp_t>(static_cast<int>(op)); }
ncclComm_t commOf(const tuner::CollectiveArgs& a) noexcept { return reinterpret_cast<ncclComm_t>(a.comm); }

// How long a stopped rank gives the recorder to write what it recorded and close the store.
constexpr std::int64_t kRecorderStopNs = 2'000'000'000;

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

namespace {

constexpr int kDeviceNotAsked = -2;
thread_local int t_device = kDeviceNotAsked;

}  // namespace

PlanRuntime* PlanRuntime::forCall() noexcept {
  if (insideOwnCall() || insideNccl()) return nullptr;
  PlanRuntime& rt = instance();
  if (rt.state_.load(std::memory_order_acquire) == State::Off) return nullptr;
  if (!rt.activate()) return nullptr;
  return &rt;
}

int PlanRuntime::threadDevice() noexcept {
  if (t_device == kDeviceNotAsked) {
    OwnCall own;
    const CudartHelpers* helpers = cudartHelpers();
    int device = -1;
    if (helpers == nullptr || helpers->cudaGetDevice == nullptr || helpers->cudaGetDevice(&device) != cudaSuccess) {
      device = -1;
    }
    t_device = device;
  }
  return t_device;
}

bool PlanRuntime::activate() noexcept {
  std::call_once(activation_, [this] {
    const char* path = std::getenv("SYNCOPATE_PLAN");
    plan_path_ = path != nullptr ? path : "";
    std::atexit(&PlanRuntime::atExit);
    try {
      auto plan = tuner::readPlan(plan_path_);
      if (!plan.ok()) {
        disabled_reason_ = plan.message();
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
    if (plan_ && plan_->groups.empty() && !plan_->channels.empty()) {
      // Channel counts alone: NCCL applies them through the tuner plugin; nothing is reordered.
      log(LogLevel::Info, "runtime: %s sets NCCL channel counts only; the schedule stays the program's",
          plan_path_.c_str());
      state_.store(State::Off, std::memory_order_release);
      return;
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

std::span<const tuner::ChannelRule> PlanRuntime::channelRules() noexcept {
  activate();  // once; after it, plan_ no longer changes
  return plan_ ? std::span<const tuner::ChannelRule>(plan_->channels) : std::span<const tuner::ChannelRule>{};
}

bool PlanRuntime::ensureScheduler() noexcept {
  if (scheduler_) [[likely]] return true;
  const CudartHelpers* helpers = cudartHelpers();
  if (helpers == nullptr || realCudart() == nullptr || runtimeNext().cudart == nullptr) return false;
  OwnCall own;
  device_ = threadDevice();
  // The runtime's own agreement between ranks goes through buffers and a stream nobody records.
  if (!agreement_.prepare()) {
    disabled_reason_ = "the runtime could not allocate its buffers and streams";
    log(LogLevel::Error, "runtime: %s; the job runs unchanged", disabled_reason_.c_str());
    state_.store(State::Off, std::memory_order_release);
    return false;
  }
  try {
    scheduler_.emplace(rules_, *this);
    watchdog_.start(
        watchdogLimitNs(),
        [this](std::uint32_t slot) { return cudartHelpers()->cudaEventQuery(events_[slot]) == cudaErrorNotReady; },
        [this](Watchdog::Stall what, std::int64_t waited_ns) { watchdogStalled(what, waited_ns); });
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
  holdIfStopping();
  const std::lock_guard one_at_a_time(sequence_);
  holdIfStopping();
  if (!ensureScheduler()) {
    OwnCall own;
    return original(call.stream);
  }
  // A thread whose current device is not the scheduler's issues to another device.
  if (threadDevice() != device_) stopFor(tuner::Fallback::MultipleDevices);
  current_ = &original;
  result_ = 0;
  scheduler_->onCall(call);
  current_ = nullptr;
  const bool lets_the_host_read =
      call.kind == tuner::CallKind::StreamSync || call.kind == tuner::CallKind::EventSync ||
      call.kind == tuner::CallKind::DeviceSync ||
      ((call.kind == tuner::CallKind::StreamQuery || call.kind == tuner::CallKind::EventQuery) && result_ == cudaSuccess);
  if (lets_the_host_read) {
    watchdog_.deviceProgressed();
    stopIfAnIssuedCollectiveFailed();
  }
  return result_;
}

void PlanRuntime::stopFor(tuner::Fallback why) noexcept {
  if (!scheduler_ || !scheduler_->active()) return;
  tuner::Call none;
  none.kind = tuner::CallKind::Barrier;
  scheduler_->stop(why, none);
}

void PlanRuntime::selectingDevice(int device) noexcept {
  holdIfStopping();
  const std::lock_guard one_at_a_time(sequence_);
  t_device = device;
  if (scheduler_ && device != device_) {
    OwnCall own;
    stopFor(tuner::Fallback::MultipleDevices);
  }
}

// ---- communicators --------------------------------------------------------------------------

void PlanRuntime::communicatorCreated(ncclComm_t comm, int rank, int nranks) noexcept {
  if (state_.load(std::memory_order_acquire) == State::Off || comm == nullptr) return;
  if (comms_.add(comm, rank, nranks) && rank_ < 0) rank_ = rank;
}

// Whatever the state: a runtime that turned itself off (the plan is read at the first call handed
// to it) may have made twins before, which end with their communicators all the same.
void PlanRuntime::communicatorEnding(ncclComm_t comm, bool abort) noexcept { comms_.retire(comm, abort); }

std::uint32_t PlanRuntime::communicatorIndex(ncclComm_t comm) noexcept { return comms_.indexOf(comm); }

int PlanRuntime::communicatorSize(ncclComm_t comm) noexcept { return comms_.sizeOf(comm); }

void PlanRuntime::note(ncclResult_t result, const char* what) noexcept {
  if (result == ncclSuccess) return;
  // Refused because its communicator has failed (a peer died or left): as at a host sync.
  stopIfAnIssuedCollectiveFailed();
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
  OwnCall own;
  result_ = (*current_)(call.stream);
}

void PlanRuntime::recordApplicationEvent(const tuner::Call&, tuner::StreamHandle stream) {
  OwnCall own;
  result_ = (*current_)(stream);
}

void PlanRuntime::issueHeld(const tuner::HeldCollective& h) {
  OwnCall own;
  markIssuedOn(commOf(h.args));
  issueAsCalled(h.args, streamOf(h.stream), "a collective issued in its original order");
}

void PlanRuntime::issueAsCalled(const tuner::CollectiveArgs& a, cudaStream_t stream, const char* what) noexcept {
  const NcclTable& nccl = *runtimeNext().nccl;
  const void* send = reinterpret_cast<const void*>(a.send);
  void* recv = reinterpret_cast<void*>(a.recv);
  switch (a.type) {
    case trace::CollType::ReduceScatter:
      note(nccl.ncclReduceScatter(send, recv, a.count, ncclType(a.dtype), ncclOp(a.op), commOf(a), stream), what);
      return;
    case trace::CollType::AllGather:
      note(nccl.ncclAllGather(send, recv, a.count, ncclType(a.dtype), commOf(a), stream), what);
      return;
    default:  // the scheduler holds nothing else (tuner::rescheduled)
      note(nccl.ncclAllReduce(send, recv, a.count, ncclType(a.dtype), ncclOp(a.op), commOf(a), stream), what);
      return;
  }
}

void PlanRuntime::recordEvent(tuner::EventSlot event, tuner::StreamHandle stream) {
  OwnCall own;
  runtimeNext().cudart->cudaEventRecord(events_[event], streamOf(stream));
  if (expect_unit_done_) {
    expect_unit_done_ = false;
    watchdog_.unitIssued(event);
  }
}

void PlanRuntime::waitEvent(tuner::StreamHandle stream, tuner::EventSlot event) {
  OwnCall own;
  runtimeNext().cudart->cudaStreamWaitEvent(streamOf(stream), events_[event], 0);
}

void PlanRuntime::hostWait(tuner::EventSlot event) {
  OwnCall own;
  runtimeNext().cudart->cudaEventSynchronize(events_[event]);
}

void PlanRuntime::queryWith(const tuner::Call& call, tuner::EventSlot also) {
  OwnCall own;
  const cudaError_t pending = cudartHelpers()->cudaEventQuery(events_[also]);
  result_ = pending == cudaErrorNotReady ? static_cast<int>(cudaErrorNotReady) : (*current_)(call.stream);
}

void PlanRuntime::issueUnit(const tuner::UnitIssue& unit) {
  OwnCall own;
  const NcclTable& nccl = *runtimeNext().nccl;
  const CudartTable& cudart = *runtimeNext().cudart;
  const tuner::CollectiveArgs& first = unit.members.front().args;
  const std::uint64_t elem = trace::dataTypeSize(first.dtype);
  const cudaStream_t stream = streamOf(unit.stream);
  markIssuedOn(commOf(first));
  expect_unit_done_ = true;
  if (tuner::shardedFused(unit)) {
    issueShardedFused(unit, stream);
    return;
  }
  // A reduce-scatter or all-gather alone is a bucket of its own in one part: the application's
  // own call, moved.
  if (!tuner::splittable(first.type)) {
    issueAsCalled(first, stream, "a rescheduled collective");
    return;
  }
  if (unit.contiguous) {
    note(nccl.ncclAllReduce(reinterpret_cast<const void*>(first.send + unit.offset * elem),
                            reinterpret_cast<void*>(first.recv + unit.offset * elem), unit.count, ncclType(first.dtype),
                            ncclOp(first.op), commOf(first), stream),
         "a fused all-reduce");
    return;
  }
  // Members apart in memory: through the fusion buffer.
  auto* buffer = fusionBuffer(unit.count * elem);
  if (buffer == nullptr) return;
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

// Several reduce-scatters or all-gathers as one call on the fusion buffer laid out rank by rank
// (tuner/include/syncopate/tuner/sharded_fusion.hpp says how and why).
void PlanRuntime::issueShardedFused(const tuner::UnitIssue& unit, cudaStream_t stream) {
  const NcclTable& nccl = *runtimeNext().nccl;
  const CudartTable& cudart = *runtimeNext().cudart;
  const tuner::CollectiveArgs& first = unit.members.front().args;
  const tuner::ShardedFusion f = tuner::shardedFusion(unit);
  unsigned char* buffer = fusionBuffer(f.bytes());
  if (buffer == nullptr) return;
  unsigned char* own = buffer + f.ownOffset();
  const auto address = [](std::uint64_t a) { return reinterpret_cast<void*>(a); };
  if (first.type == trace::CollType::ReduceScatter) {
    tuner::forEachColumn(unit, [&](const tuner::CollectiveArgs& m, std::uint64_t column) {
      cudart.cudaMemcpy2DAsync(buffer + column * f.elem, f.rowBytes(), address(m.send), m.count * f.elem,
                               m.count * f.elem, f.ranks, cudaMemcpyDeviceToDevice, stream);
    });
    note(nccl.ncclReduceScatter(buffer, own, f.total, ncclType(first.dtype), ncclOp(first.op), commOf(first), stream),
         "fused reduce-scatters");
    tuner::forEachColumn(unit, [&](const tuner::CollectiveArgs& m, std::uint64_t column) {
      cudart.cudaMemcpyAsync(address(m.recv), own + column * f.elem, m.count * f.elem, cudaMemcpyDeviceToDevice,
                             stream);
    });
    return;
  }
  tuner::forEachColumn(unit, [&](const tuner::CollectiveArgs& m, std::uint64_t column) {
    cudart.cudaMemcpyAsync(own + column * f.elem, address(m.send), m.count * f.elem, cudaMemcpyDeviceToDevice, stream);
  });
  note(nccl.ncclAllGather(own, buffer, f.total, ncclType(first.dtype), commOf(first), stream), "fused all-gathers");
  tuner::forEachColumn(unit, [&](const tuner::CollectiveArgs& m, std::uint64_t column) {
    cudart.cudaMemcpy2DAsync(address(m.recv), m.count * f.elem, buffer + column * f.elem, f.rowBytes(),
                             m.count * f.elem, f.ranks, cudaMemcpyDeviceToDevice, stream);
  });
}

// Grown at the first bucket that needs more: a rare and synchronising allocation, bounded by the
// plan (`syncopate tune --memory-limit`). Null, said once, when the device has no room.
unsigned char* PlanRuntime::fusionBuffer(std::size_t bytes) {
  if (bytes > fusion_bytes_) {
    if (fusion_buffer_ != nullptr) realCudart()->cudaFree(fusion_buffer_);
    fusion_buffer_ = nullptr;
    fusion_bytes_ = 0;
    if (realCudart()->cudaMalloc(&fusion_buffer_, bytes) != cudaSuccess) {
      fusion_buffer_ = nullptr;
      note(ncclSystemError, "allocating the fusion buffer");
      return nullptr;
    }
    fusion_bytes_ = bytes;
  }
  return static_cast<unsigned char*>(fusion_buffer_);
}

bool PlanRuntime::agree(std::uint64_t digest, std::span<const tuner::HeldCollective> group, bool across_ranks) {
  if (!across_ranks) return true;
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
  bool all = true;
  for (int i = 0; i < count; ++i) {
    const CommunicatorTable::Communicator* c = comms_.find(seen[i]);
    // Without a twin every rank answers no (the program is the same on every rank).
    if (c == nullptr || c->twin == nullptr) return false;
    const RankAgreement::Outcome outcome = agreement_.agree(c->twin, digest, watchdog_);
    // The watchdog may have stopped this rank while it waited, and the agreement completed
    // since: issuing the group now would leave the others' all-reduces half done.
    holdIfStopping();
    if (outcome.agreement == tuner::Agreement::PeerFailed) peerFailed(outcome);
    all = all && outcome.agreement == tuner::Agreement::Agreed;
  }
  return all;
}

// Not a disagreement: the ranks' call sequences are not known to differ, the others can no
// longer be reached. Going on in the original order would only meet the same failure in the
// application's next collective, so the rank stops as the watchdog stops it: one clear line,
// the report written, a non-zero exit.
void PlanRuntime::peerFailed(const RankAgreement::Outcome& outcome) noexcept {
  const NcclHelpers* helpers = ncclHelpers();
  char cause[160];
  if (outcome.failed != ncclSuccess) {
    const char* text =
        helpers != nullptr && helpers->ncclGetErrorString != nullptr ? helpers->ncclGetErrorString(outcome.failed) : "";
    std::snprintf(cause, sizeof cause, "NCCL error %d: %s", static_cast<int>(outcome.failed), text);
  } else {
    std::snprintf(cause, sizeof cause, "CUDA error %d on its stream", static_cast<int>(outcome.completion));
  }
  char message[512];
  std::snprintf(message, sizeof message,
                "runtime (rank %d): the agreement between ranks at a flush failed after %.3f s (%s); another rank has "
                "died or left. Stopping this rank instead of hanging",
                rank_, static_cast<double>(outcome.waited_ns) / 1e9, cause);
  fire(message);
}

void PlanRuntime::markIssuedOn(ncclComm_t comm) noexcept {
  if (CommunicatorTable::Communicator* c = comms_.find(comm)) c->issued_on = true;
}

// A peer that agreed and then died (stopped by its watchdog as the agreement completed, or
// killed) leaves this rank's collectives of that group failed; NCCL may then complete them
// with what it had (simgpu does), and the program would read a half-reduced result. Checked
// where the program can first read it, on the host.
void PlanRuntime::stopIfAnIssuedCollectiveFailed() noexcept {
  ncclResult_t error = ncclSuccess;
  if (comms_.failedIssuedOn(&error) == nullptr) return;
  const NcclHelpers* helpers = ncclHelpers();
  const char* text =
      helpers != nullptr && helpers->ncclGetErrorString != nullptr ? helpers->ncclGetErrorString(error) : "";
  char message[512];
  std::snprintf(message, sizeof message,
                "runtime (rank %d): a collective the plan issued failed (NCCL error %d: %s); another rank has died "
                "or left. Stopping this rank before the program reads its result",
                rank_, static_cast<int>(error), text);
  fire(message);
}

void PlanRuntime::holdIfStopping() const noexcept {
  if (!fired_.load(std::memory_order_acquire)) return;
  // fire() ends the process within the recorder's bounded stop.
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
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

void PlanRuntime::watchdogStalled(Watchdog::Stall what, std::int64_t waited_ns) noexcept {
  char message[512];
  if (what == Watchdog::Stall::Agreement) {
    std::snprintf(message, sizeof message,
                  "runtime (rank %d): waited %lld s for the other ranks to agree on the plan at a flush; a rank has "
                  "died or is stuck elsewhere. Stopping this rank instead of hanging",
                  rank_, static_cast<long long>(waited_ns / 1'000'000'000));
  } else {
    std::snprintf(message, sizeof message,
                  "runtime (rank %d): a collective the plan issued has not completed, and no host synchronisation has "
                  "returned, for %lld s; a rank has died "
                  "or the ranks' schedules diverged. Stopping this rank instead of hanging",
                  rank_, static_cast<long long>(waited_ns / 1'000'000'000));
  }
  fire(message);
}

// `_Exit`, not `exit`: exit handlers may wait on the hung work. The recorder's is the one that
// matters (nothing already recorded may be lost), so the other layers' bounded stop comes first.
void PlanRuntime::fire(const char* message) noexcept {
  OwnCall own;  // what stopping calls (the recorder's stop) passes straight through, never held
  if (fired_.exchange(true)) {
    // The other thread that fired is closing the store and ends the process within its limit.
    std::this_thread::sleep_for(std::chrono::nanoseconds(kRecorderStopNs + 1'000'000'000));
    std::_Exit(3);
  }
  log(LogLevel::Error, "%s", message);
  writeRuntimeReport(report(message));
  if (stopOtherLayersWithin(kTunerRuntimeLayer, kRecorderStopNs) == LayerStop::TimedOut) {
    log(LogLevel::Error,
        "runtime (rank %d): the recorder did not finish writing this rank's store within %lld s; what it had not "
        "committed yet is lost",
        rank_, static_cast<long long>(kRecorderStopNs / 1'000'000'000));
  }
  std::_Exit(3);
}

RuntimeReport PlanRuntime::report(const char* watchdog_message) const noexcept {
  RuntimeReport r;
  try {
    r.plan_path = plan_path_;
    r.checksum = plan_ ? fmt::format("{:016x}", plan_->checksum) : std::string();
    r.rank = rank_;
    r.applied = scheduler_.has_value() && scheduler_->active();
    r.disabled_reason = disabled_reason_;
  } catch (...) {
    // Out of memory: the report says less, but it is written.
  }
  if (scheduler_) {
    r.scheduling = RuntimeReport::Scheduling{scheduler_->stats(), agreement_.calls(),
                                             static_cast<double>(agreement_.totalNs()) / 1e6,
                                             static_cast<double>(agreement_.maxNs()) / 1e6};
    r.fallbacks = scheduler_->stats().fallbacks;
  } else {
    r.fallbacks = said_;
  }
  r.watchdog_message = watchdog_message;
  return r;
}

void PlanRuntime::atExit() noexcept {
  PlanRuntime& rt = instance();
  rt.watchdog_.stop();
  if (!rt.fired_.load()) writeRuntimeReport(rt.report(nullptr));
}

}  // namespace syncopate::preload
