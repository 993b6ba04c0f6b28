// CUPTI activity records made from simgpu's ops: a kernel (NCCL's collective kernels
// included) becomes a CUpti_ActivityKernel10, a copy a CUpti_ActivityMemcpy6, a fill a
// CUpti_ActivityMemset4; markers, waits and host functions are not activities. Times are moved
// from simgpu's CLOCK_MONOTONIC to the client's clock (its timestamp callback, else
// CLOCK_REALTIME, as CUPTI does).
#pragma once

#include <simgpu/core/observer.hpp>

#include <cupti_activity.h>

#include <cstdint>

namespace simgpu::cupti {

// Offset to add to a CLOCK_MONOTONIC time to get the client's clock, now.
std::int64_t clientClockOffset(CUpti_TimestampCallbackFunc callback);

CUpti_ActivityKernel10 kernelRecord(const CompletedOp& op, CUpti_ActivityKind kind, std::int64_t offset);
CUpti_ActivityMemcpy6 memcpyRecord(const CompletedOp& op, std::int64_t offset);
CUpti_ActivityMemset4 memsetRecord(const CompletedOp& op, std::int64_t offset);

// A NUL-terminated copy of `name` that lives as long as the process (records point to it).
const char* persistentName(std::string_view name);

}  // namespace simgpu::cupti
