// ncclRedOpCreatePreMulSum / ncclRedOpDestroy: per-communicator operators that multiply each
// rank's input by that rank's scalar, then sum.
#include "api.hpp"
#include "comm_state.hpp"
#include "log.hpp"
#include "simgpu/nccl/datatype.hpp"

#include <cstring>

using namespace simgpu::nccl;

SIMGPU_NCCL_API(ncclResult_t, ncclRedOpCreatePreMulSum, ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                ncclScalarResidence_t residence, ncclComm_t comm);
ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  constexpr const char* api = "ncclRedOpCreatePreMulSum";
  Status why;
  CommState* state = commFromHandle(comm, api, &why);
  if (state == nullptr) return fail(why);
  if (op == nullptr) return fail(ncclInvalidArgument, "ncclRedOpCreatePreMulSum: op argument is NULL");
  if (scalar == nullptr) return fail(ncclInvalidArgument, "ncclRedOpCreatePreMulSum: scalar argument is NULL");
  if (!isValidDatatype(datatype)) {
    return fail(ncclInvalidArgument, "ncclRedOpCreatePreMulSum: invalid type " + std::to_string(static_cast<int>(datatype)));
  }
  if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate) {
    return fail(ncclInvalidArgument, "ncclRedOpCreatePreMulSum: invalid residence " + std::to_string(static_cast<int>(residence)));
  }
  UserRedOp user;
  user.live = true;
  user.datatype = datatype;
  if (residence == ncclScalarHostImmediate) std::memcpy(user.value.data(), scalar, datatypeSize(datatype));
  else user.device_scalar = scalar;
  std::lock_guard lock(state->redop_mu);
  std::size_t index = 0;
  while (index < state->redops.size() && state->redops[index].live) ++index;
  if (static_cast<long long>(index) + ncclNumOps > ncclMaxRedOp) {
    return fail(ncclInvalidUsage, "ncclRedOpCreatePreMulSum: too many reduction operators on this communicator");
  }
  if (index == state->redops.size()) state->redops.push_back(user);
  else state->redops[index] = user;
  *op = static_cast<ncclRedOp_t>(ncclNumOps + static_cast<int>(index));
  return ncclSuccess;
}

SIMGPU_NCCL_API(ncclResult_t, ncclRedOpDestroy, ncclRedOp_t op, ncclComm_t comm);
ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  Status why;
  CommState* state = commFromHandle(comm, "ncclRedOpDestroy", &why);
  if (state == nullptr) return fail(why);
  const int value = static_cast<int>(op);
  if (value >= 0 && value < ncclNumOps) {
    return fail(ncclInvalidArgument, "ncclRedOpDestroy: operator " + std::to_string(value) + " is a built-in operator");
  }
  std::lock_guard lock(state->redop_mu);
  const auto index = static_cast<std::size_t>(value - ncclNumOps);
  if (value < 0 || index >= state->redops.size() || !state->redops[index].live) {
    return fail(ncclInvalidArgument, "ncclRedOpDestroy: operator " + std::to_string(value) + " unknown to this communicator");
  }
  state->redops[index].live = false;
  return ncclSuccess;
}
