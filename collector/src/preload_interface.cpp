// The versioned C interface (syncopate/collector/preload.h).
#include "syncopate/collector/preload.h"

#include "syncopate/dispatch/export.hpp"
#include "recorder/recorder.hpp"

namespace syncopate::preload {
namespace {

int getStatus(syncopate_preload_status_v1* status) noexcept {
  if (status == nullptr || status->struct_size < sizeof(syncopate_preload_status_v1)) return -1;
  const std::uint32_t size = status->struct_size;
  *status = syncopate_preload_status_v1{};
  status->struct_size = size;
  status->rank = -1;
  Recorder* recorder = Recorder::current();
  if (recorder == nullptr) return 0;
  status->active = 1;
  status->recording = recorder->recording() ? 1 : 0;
  status->rank = recorder->rank();
  status->backend = recorder->timing().name();
  const Recorder::RingStats rings = recorder->ringStats();
  status->records_dropped = rings.dropped;
  status->threads = rings.threads;
  const RecorderCounters& counters = recorder->counters();
  status->ops_untimed = counters.ops_untimed_no_timing_slot.load(std::memory_order_relaxed) +
                        counters.ops_untimed_timing_failed.load(std::memory_order_relaxed);
  return 0;
}

int flush() noexcept {
  Recorder* recorder = Recorder::current();
  if (recorder == nullptr) return -1;
  recorder->requestFlush();
  return 0;
}

constexpr syncopate_preload_interface_v1 kInterfaceV1{sizeof(syncopate_preload_interface_v1), 1, getStatus, flush};

}  // namespace
}  // namespace syncopate::preload

extern "C" SYNCOPATE_EXPORT int syncopate_preload_get_interface(uint32_t version, const void** interface) {
  if (interface == nullptr || version != 1) return -1;
  *interface = &syncopate::preload::kInterfaceV1;
  return 0;
}
