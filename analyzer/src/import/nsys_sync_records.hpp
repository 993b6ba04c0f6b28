// Nsight Systems' synchronisation records (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) and CUDA event
// records (CUPTI_ACTIVITY_KIND_CUDA_EVENT), read across the schema variants Nsight versions
// write, and resolved into what each is: a host sync (stream, event, device or context) or a
// stream's wait for an event; an event record on a stream.
//
// A synchronisation record's kind comes from the API call it belongs to (joined by correlation
// id) when that call is a known synchronisation call, and from its own syncType otherwise:
// exports have been seen to label cudaDeviceSynchronize an event synchronize with neither
// event nor stream. Its stream and event ids are absent where CUPTI says "not applicable"
// (CUPTI_SYNCHRONIZATION_INVALID_VALUE).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "nsys_export.hpp"
#include "syncopate/trace/types.hpp"

namespace syncopate::analyzer::import {

struct NsysSync {
  std::int64_t global_pid = 0;
  std::int64_t start = 0, end = 0;
  std::int32_t device = 0;
  std::optional<std::int64_t> stream;       // the stream synchronised, or that waits
  std::optional<std::int64_t> event;        // the event synchronised or waited for
  std::optional<std::int64_t> correlation;  // the API call's
  bool stream_wait = false;                 // a stream waits for the event; the host does not
  trace::SyncKind kind = trace::SyncKind::Unknown;  // of a host sync
  bool kind_from_call = false;              // the record's own syncType said otherwise
};

struct NsysEventRecord {
  std::int64_t global_pid = 0;
  std::int32_t device = 0;
  std::int64_t stream = 0;
  std::int64_t event = 0;
  std::optional<std::int64_t> correlation;  // the cudaEventRecord call's
  std::optional<std::int64_t> device_time;  // when the GPU reached it, where the export has it
};

// Calls `each` for every synchronisation record; fails on a missing column or damage.
trace::Status readNsysSyncs(const NsysExport& e, const std::function<trace::Status(const NsysSync&)>& each);

// Calls `each` for every CUDA event record (none when the export has no such table).
trace::Status readNsysEventRecords(const NsysExport& e, const std::function<trace::Status(const NsysEventRecord&)>& each);

}  // namespace syncopate::analyzer::import
