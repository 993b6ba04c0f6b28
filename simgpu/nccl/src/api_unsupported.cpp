// The rest of what the toolkit's libnccl.so.2 exports: the device-side API (device
// communicators, symmetric windows, barriers), communicator revocation and the debug
// re-initialisation. Each prints "simgpu: <name> is not simulated" once and fails; none
// pretends to succeed.
#include "api.hpp"
#include "log.hpp"

using namespace simgpu::nccl;

SIMGPU_NCCL_API(ncclResult_t, ncclCommRevoke, ncclComm_t comm, int revokeFlags);
ncclResult_t ncclCommRevoke(ncclComm_t, int) { return notSimulated("ncclCommRevoke"); }

SIMGPU_NCCL_API(ncclResult_t, ncclCommWindowRegister, ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                int winFlags);
ncclResult_t ncclCommWindowRegister(ncclComm_t, void*, size_t, ncclWindow_t*, int) {
  return notSimulated("ncclCommWindowRegister");
}

SIMGPU_NCCL_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm, ncclWindow_t win);
ncclResult_t ncclCommWindowDeregister(ncclComm_t, ncclWindow_t) { return notSimulated("ncclCommWindowDeregister"); }

SIMGPU_NCCL_API(ncclResult_t, ncclDevCommCreate, ncclComm_t comm, const void* reqs, void* outDevComm);
ncclResult_t ncclDevCommCreate(ncclComm_t, const void*, void*) { return notSimulated("ncclDevCommCreate"); }

SIMGPU_NCCL_API(ncclResult_t, ncclDevCommDestroy, ncclComm_t comm, const void* devComm);
ncclResult_t ncclDevCommDestroy(ncclComm_t, const void*) { return notSimulated("ncclDevCommDestroy"); }

SIMGPU_NCCL_API(ncclResult_t, ncclLsaBarrierCreateRequirement, Team team, int nBarriers, void* outHandle, void* outReq);
ncclResult_t ncclLsaBarrierCreateRequirement(Team, int, void*, void*) {
  return notSimulated("ncclLsaBarrierCreateRequirement");
}

SIMGPU_NCCL_API(ncclResult_t, ncclGinBarrierCreateRequirement, ncclComm_t comm, Team team, int nBarriers,
                void* outHandle, void* outReq);
ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t, Team, int, void*, void*) {
  return notSimulated("ncclGinBarrierCreateRequirement");
}

SIMGPU_NCCL_API(ncclResult_t, ncclLLA2ACreateRequirement, int nBlocks, int nSlots, void* outHandle, void* outReq);
ncclResult_t ncclLLA2ACreateRequirement(int, int, void*, void*) { return notSimulated("ncclLLA2ACreateRequirement"); }

// Returns a slot count; 0 slots, with the message, for a device API simgpu does not run.
SIMGPU_NCCL_API(int, ncclLLA2ACalcSlots, int maxElts, int maxEltSize);
int ncclLLA2ACalcSlots(int, int) {
  notSimulated("ncclLLA2ACalcSlots");
  return 0;
}

SIMGPU_NCCL_API(void, ncclResetDebugInit);
void ncclResetDebugInit() { notSimulated("ncclResetDebugInit"); }

// Exported by the toolkit's library as a plain strong symbol, without a pncclX twin.
extern "C" __attribute__((visibility("default"))) void ncclResetDebugInitInternal() {
  notSimulated("ncclResetDebugInitInternal");
}
