// What NCCL kernel names and PyTorch's collective arguments say about a collective, for the
// importers (their sources have names and strings, not NCCL's enums).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "syncopate/trace/types.hpp"

namespace syncopate::analyzer::import {

struct NcclKernelInfo {
  bool is_nccl = false;
  bool is_send_recv = false;  // ncclKernel_SendRecv_*: send and receive in one kernel
  trace::CollType type = trace::CollType::Unknown;
  trace::DataType dtype = trace::DataType::Unknown;
  trace::RedOp red_op = trace::RedOp::Unknown;
};

// ncclKernel_AllReduce_RING_LL_Sum_float(...), ncclDevKernel_AllGather_RING_LL(...),
// ncclDevKernel_AllReduce_Sum_f32_RING_LL(...), ncclDevKernel_SendRecv(...).
NcclKernelInfo parseNcclKernelName(std::string_view name);

// PyTorch's "Collective name" argument: allreduce, _allgather_base, reduce_scatter_tensor_coalesced, ...
trace::CollType collTypeFromPytorchName(std::string_view name);

// PyTorch's dtype names (c10::ScalarType): Float, Half, BFloat16, Double, Int, Long, Byte, Char, Bool, ...
trace::DataType dataTypeFromPytorchName(std::string_view name);

// "[0, 1, 2]" -> {0, 1, 2}; an empty vector when it is not such a list.
std::vector<std::int32_t> parseRankList(std::string_view text);

}  // namespace syncopate::analyzer::import
