// The names simgpu gives the stream operations of NCCL calls: those of NCCL's own kernels
// (ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclDevKernel_SendRecv, ...), so that tools that
// recognise communication kernels by name see simgpu's the same way.
#pragma once

#include "simgpu/nccl/cost_model.hpp"
#include "simgpu/nccl/reduction.hpp"

#include <nccl.h>

#include <string_view>

namespace simgpu::nccl {

inline constexpr std::string_view kSendRecvKernel = "ncclDevKernel_SendRecv";

// Valid for the life of the process.
std::string_view collectiveKernelName(CollKind kind, RedOp op, bool premul, ncclDataType_t datatype,
                                      Algorithm algorithm);

}  // namespace simgpu::nccl
