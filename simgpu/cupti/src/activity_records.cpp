#include "activity_records.hpp"

#include <cstdint>
#include <ctime>
#include <mutex>
#include <set>
#include <string>

namespace simgpu::cupti {
namespace {

std::int64_t clockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::uint64_t client(TimeNs t, std::int64_t offset) { return static_cast<std::uint64_t>(t + offset); }

std::uint8_t copyKind(CopyDirection direction) {
  switch (direction) {
    case CopyDirection::HostToDevice: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    case CopyDirection::DeviceToHost: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    case CopyDirection::DeviceToDevice: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    case CopyDirection::HostToHost: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
    case CopyDirection::Peer: return CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    case CopyDirection::None: break;
  }
  return CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
}

}  // namespace

std::int64_t clientClockOffset(CUpti_TimestampCallbackFunc callback) {
  // The client's clock read between two readings of CLOCK_MONOTONIC, taken as their midpoint:
  // of a few tries, the one with the shortest bracket (one the scheduler interrupted is passed
  // over), so the offset is right within half of that bracket (tens of ns) even on a loaded
  // machine, instead of off by the whole gap between two readings.
  std::int64_t best_bracket = INT64_MAX;
  std::int64_t offset = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const std::int64_t before = clockNs(CLOCK_MONOTONIC);
    const std::int64_t target = callback != nullptr ? static_cast<std::int64_t>(callback()) : clockNs(CLOCK_REALTIME);
    const std::int64_t after = clockNs(CLOCK_MONOTONIC);
    if (after - before < best_bracket) {
      best_bracket = after - before;
      offset = target - (before + (after - before) / 2);
    }
  }
  return offset;
}

const char* persistentName(std::string_view name) {
  // Never destroyed, as activity_api.cpp's state: workers write records until simgpu stops them,
  // after the static destructors (and the exit handlers registered before the first record) ran.
  struct Names {
    std::mutex mutex;
    std::set<std::string, std::less<>> set;
  };
  static Names* const names = new Names;
  std::lock_guard lock(names->mutex);
  auto found = names->set.find(name);
  if (found == names->set.end()) found = names->set.emplace(name).first;
  return found->c_str();
}

CUpti_ActivityKernel10 kernelRecord(const CompletedOp& op, CUpti_ActivityKind kind, std::int64_t offset) {
  CUpti_ActivityKernel10 record{};
  record.kind = kind;
  record.start = client(op.start_ns, offset);
  record.end = client(op.end_ns, offset);
  record.completed = record.end;
  record.deviceId = static_cast<std::uint32_t>(op.device);
  record.contextId = static_cast<std::uint32_t>(op.device) + 1;
  record.streamId = static_cast<std::uint32_t>(op.stream_id);
  record.correlationId = static_cast<std::uint32_t>(op.correlation_id);
  record.name = persistentName(op.name);
  record.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  return record;
}

CUpti_ActivityMemcpy6 memcpyRecord(const CompletedOp& op, std::int64_t offset) {
  CUpti_ActivityMemcpy6 record{};
  record.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  record.copyKind = copyKind(op.direction);
  record.bytes = op.bytes;
  record.start = client(op.start_ns, offset);
  record.end = client(op.end_ns, offset);
  record.deviceId = static_cast<std::uint32_t>(op.device);
  record.contextId = static_cast<std::uint32_t>(op.device) + 1;
  record.streamId = static_cast<std::uint32_t>(op.stream_id);
  record.correlationId = static_cast<std::uint32_t>(op.correlation_id);
  record.copyCount = 1;
  return record;
}

CUpti_ActivityMemset4 memsetRecord(const CompletedOp& op, std::int64_t offset) {
  CUpti_ActivityMemset4 record{};
  record.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  record.bytes = op.bytes;
  record.start = client(op.start_ns, offset);
  record.end = client(op.end_ns, offset);
  record.deviceId = static_cast<std::uint32_t>(op.device);
  record.contextId = static_cast<std::uint32_t>(op.device) + 1;
  record.streamId = static_cast<std::uint32_t>(op.stream_id);
  record.correlationId = static_cast<std::uint32_t>(op.correlation_id);
  record.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  return record;
}

}  // namespace simgpu::cupti
