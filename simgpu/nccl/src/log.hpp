// The one place libnccl.so.2 reports from: errors are printed on stderr (as NCCL's WARN
// lines, prefixed "simgpu NCCL:") and kept for ncclGetLastError.
#pragma once

#include "simgpu/nccl/status.hpp"

#include <nccl.h>

#include <string>

namespace simgpu::nccl {

// Prints and records `message`; returns `code` so that callers can `return fail(...)`.
ncclResult_t fail(ncclResult_t code, const std::string& message);
ncclResult_t fail(const Status& status);
// "simgpu: <api> is not simulated", once per API; returns ncclInvalidUsage.
ncclResult_t notSimulated(const char* api);
// The last error recorded by any thread (ncclGetLastError); stable until the caller's next call.
const char* lastErrorText();

}  // namespace simgpu::nccl
