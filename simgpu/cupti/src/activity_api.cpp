// The CUPTI activity API functions simgpu implements (the rest are generated stand-ins that
// say they are not simulated). Activities come from the core's op observer, external
// correlations from its enqueue observer, which runs on the thread that issued the op, where
// that thread's pushed external ids are. One difference from CUPTI: API activity records
// (CUPTI_ACTIVITY_KIND_RUNTIME/DRIVER) are not produced, and an external correlation record is
// written for every op issued while an id is pushed, whether or not API activity is enabled.
#include <simgpu/core/observer.hpp>

#include <cupti_activity.h>
#include <cupti_result.h>
#include <cupti_version.h>

#include <array>
#include <atomic>
#include <vector>

#include "activity_buffers.hpp"
#include "activity_records.hpp"

namespace simgpu::cupti {
namespace {

constexpr std::size_t kKinds = CUPTI_ACTIVITY_KIND_COUNT;
constexpr std::size_t kExternalKinds = CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;

struct State {
  ActivityBuffers buffers;
  std::array<std::atomic<bool>, kKinds> enabled{};
  std::atomic<CUpti_TimestampCallbackFunc> timestamp{nullptr};
  std::atomic<bool> observing{false};
};

State& state() {
  static State* s = new State;  // outlives static destructors: workers may still report
  return *s;
}

thread_local std::array<std::vector<std::uint64_t>, kExternalKinds> externalIds;

bool enabled(CUpti_ActivityKind kind) {
  return static_cast<std::size_t>(kind) < kKinds && state().enabled[static_cast<std::size_t>(kind)].load(std::memory_order_acquire);
}

void onOpCompleted(const CompletedOp& op, void*) {
  if (op.abandoned) return;
  State& s = state();
  const std::int64_t offset = clientClockOffset(s.timestamp.load(std::memory_order_acquire));
  switch (op.kind) {
    case OpKind::Kernel:
    case OpKind::Collective:
    case OpKind::P2P: {
      CUpti_ActivityKind kind = enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                                                                           : CUPTI_ACTIVITY_KIND_KERNEL;
      if (!enabled(kind)) return;
      CUpti_ActivityKernel10 record = kernelRecord(op, kind, offset);
      s.buffers.append(&record, sizeof record);
      break;
    }
    case OpKind::Memcpy: {
      if (!enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) return;
      CUpti_ActivityMemcpy6 record = memcpyRecord(op, offset);
      s.buffers.append(&record, sizeof record);
      break;
    }
    case OpKind::Memset: {
      if (!enabled(CUPTI_ACTIVITY_KIND_MEMSET)) return;
      CUpti_ActivityMemset4 record = memsetRecord(op, offset);
      s.buffers.append(&record, sizeof record);
      break;
    }
    case OpKind::EventRecord:
    case OpKind::StreamWait:
    case OpKind::HostFunc:
    case OpKind::Prefetch: return;  // unified-memory activity, which this CUPTI does not offer
  }
  s.buffers.deliver(false);  // here the client's callback may run: no simgpu lock is held
}

void onEnqueue(std::uint64_t correlation_id, void*) {
  if (!enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) return;
  for (std::size_t kind = 0; kind < kExternalKinds; ++kind) {
    if (externalIds[kind].empty()) continue;
    CUpti_ActivityExternalCorrelation record{};
    record.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    record.externalKind = static_cast<CUpti_ExternalCorrelationKind>(kind);
    record.externalId = externalIds[kind].back();
    record.correlationId = static_cast<std::uint32_t>(correlation_id);
    state().buffers.append(&record, sizeof record);
  }
}

bool simulatedKind(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMSET:
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return true;
    default: return false;
  }
}

}  // namespace
}  // namespace simgpu::cupti

using simgpu::cupti::state;

extern "C" {

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                           CUpti_BuffersCallbackCompleteFunc completed) {
  if (requested == nullptr || completed == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  state().buffers.setCallbacks(requested, completed);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc callback) {
  if (callback == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  state().timestamp.store(callback, std::memory_order_release);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (static_cast<std::size_t>(kind) >= simgpu::cupti::kKinds) return CUPTI_ERROR_INVALID_KIND;
  // Refused quietly, as CUPTI refuses a kind a device cannot record: the result says it, and
  // clients (Kineto, the collector) ask for optional kinds and carry on without them.
  if (!simgpu::cupti::simulatedKind(kind)) return CUPTI_ERROR_NOT_SUPPORTED;
  if (!state().buffers.registered()) return CUPTI_ERROR_NOT_INITIALIZED;
  state().enabled[static_cast<std::size_t>(kind)].store(true, std::memory_order_release);
  if (!state().observing.exchange(true)) {
    simgpu::setOpObserver(simgpu::cupti::onOpCompleted, nullptr);
    simgpu::setEnqueueObserver(simgpu::cupti::onEnqueue, nullptr);
  }
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  if (static_cast<std::size_t>(kind) >= simgpu::cupti::kKinds) return CUPTI_ERROR_INVALID_KIND;
  state().enabled[static_cast<std::size_t>(kind)].store(false, std::memory_order_release);
  return CUPTI_SUCCESS;
}

// Every record this library writes is complete when written: a flush hands over all of them,
// forced or not.
CUptiResult cuptiActivityFlushAll(uint32_t) {
  state().buffers.deliver(true);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid_bytes, CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::size_t offset = 0;
  if (*record != nullptr) {
    std::size_t size = simgpu::cupti::recordSize((*record)->kind);
    if (size == 0) return CUPTI_ERROR_INVALID_KIND;
    offset = static_cast<std::size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) + ((size + 7) & ~std::size_t{7});
  }
  if (offset >= valid_bytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  if (dropped == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *dropped = state().buffers.dropped();
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  if (static_cast<std::size_t>(kind) >= simgpu::cupti::kExternalKinds || kind == CUPTI_EXTERNAL_CORRELATION_KIND_INVALID) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  simgpu::cupti::externalIds[static_cast<std::size_t>(kind)].push_back(id);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t* last_id) {
  if (static_cast<std::size_t>(kind) >= simgpu::cupti::kExternalKinds || kind == CUPTI_EXTERNAL_CORRELATION_KIND_INVALID) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  auto& stack = simgpu::cupti::externalIds[static_cast<std::size_t>(kind)];
  if (stack.empty()) return CUPTI_ERROR_QUEUE_EMPTY;
  if (last_id != nullptr) *last_id = stack.back();
  stack.pop_back();
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
  if (timestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  std::int64_t monotonic = static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  *timestamp = static_cast<uint64_t>(monotonic + simgpu::cupti::clientClockOffset(state().timestamp.load()));
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetVersion(uint32_t* version) {
  if (version == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char** text) {
  if (text == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (result) {
    case CUPTI_SUCCESS: *text = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_INVALID_PARAMETER: *text = "CUPTI_ERROR_INVALID_PARAMETER"; break;
    case CUPTI_ERROR_MAX_LIMIT_REACHED: *text = "CUPTI_ERROR_MAX_LIMIT_REACHED"; break;
    case CUPTI_ERROR_NOT_INITIALIZED: *text = "CUPTI_ERROR_NOT_INITIALIZED"; break;
    case CUPTI_ERROR_QUEUE_EMPTY: *text = "CUPTI_ERROR_QUEUE_EMPTY"; break;
    case CUPTI_ERROR_INVALID_KIND: *text = "CUPTI_ERROR_INVALID_KIND"; break;
    case CUPTI_ERROR_NOT_SUPPORTED: *text = "CUPTI_ERROR_NOT_SUPPORTED"; break;
    default: *text = "CUPTI_ERROR_UNKNOWN"; return CUPTI_ERROR_INVALID_PARAMETER;
  }
  return CUPTI_SUCCESS;
}

}  // extern "C"
