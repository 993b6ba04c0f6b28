// Library-wide information: version, error strings, the last error, and groups.
#include "api.hpp"
#include "group.hpp"
#include "log.hpp"

using namespace simgpu::nccl;

SIMGPU_NCCL_API(ncclResult_t, ncclGetVersion, int* version);
ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return fail(ncclInvalidArgument, "ncclGetVersion: version argument is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

// NCCL's own texts, so that programs that match on them behave the same.
SIMGPU_NCCL_API(const char*, ncclGetErrorString, ncclResult_t result);
const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

// As in NCCL, the last error of the library, whichever communicator it came from.
SIMGPU_NCCL_API(const char*, ncclGetLastError, ncclComm_t comm);
const char* ncclGetLastError(ncclComm_t) { return lastErrorText(); }

SIMGPU_NCCL_API(ncclResult_t, ncclGroupStart);
ncclResult_t ncclGroupStart() { return groupStart(); }

SIMGPU_NCCL_API(ncclResult_t, ncclGroupEnd);
ncclResult_t ncclGroupEnd() { return groupEnd(); }

SIMGPU_NCCL_API(ncclResult_t, ncclGroupSimulateEnd, ncclSimInfo_t* simInfo);
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) { return groupSimulateEnd(simInfo); }
