// How libnccl.so.2 exports its API, as NCCL does: ncclX is a weak definition and pncclX a
// strong alias of it (same address), so a profiling layer may define ncclX itself and still
// reach the library through pncclX. Everything else in the library is hidden.
#pragma once

#include <nccl.h>

#define SIMGPU_NCCL_API(ret, func, ...)                                                     \
  extern "C" __attribute__((visibility("default"), alias(#func))) ret p##func(__VA_ARGS__); \
  extern "C" __attribute__((visibility("default"), weak)) ret func(__VA_ARGS__)

namespace simgpu::nccl {

// ncclTeam_t of nccl_device/core.h (that header needs a CUDA compiler), which the team API
// passes by value.
struct Team {
  int nRanks;
  int rank;
  int stride;
};

}  // namespace simgpu::nccl
