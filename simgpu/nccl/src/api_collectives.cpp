// Collectives and point-to-point calls: validation as NCCL does it (ncclInvalidArgument with
// a sentence), then a PendingCall for the group (or for the stream at once).
#include "api.hpp"
#include "group.hpp"
#include "kernel_names.hpp"
#include "log.hpp"
#include "simgpu/core/memory.hpp"
#include "simgpu/core/runtime.hpp"
#include "simgpu/nccl/datatype.hpp"

#include <cstdint>
#include <cstdio>
#include <limits>

using namespace simgpu::nccl;

namespace {

bool reduces(CollKind kind) {
  return kind == CollKind::AllReduce || kind == CollKind::Reduce || kind == CollKind::ReduceScatter;
}

bool rooted(CollKind kind) {
  return kind == CollKind::Broadcast || kind == CollKind::Reduce || kind == CollKind::Gather || kind == CollKind::Scatter;
}

// Elements this rank reads from sendbuff and writes to recvbuff (0: the buffer is not used).
std::size_t sendElements(CollKind kind, std::size_t count, int nranks, bool is_root) {
  switch (kind) {
    case CollKind::ReduceScatter:
    case CollKind::AlltoAll: return count * static_cast<std::size_t>(nranks);
    case CollKind::Scatter: return is_root ? count * static_cast<std::size_t>(nranks) : 0;
    case CollKind::Broadcast: return is_root ? count : 0;
    default: return count;
  }
}

std::size_t recvElements(CollKind kind, std::size_t count, int nranks, bool is_root) {
  switch (kind) {
    case CollKind::AllGather:
    case CollKind::AlltoAll: return count * static_cast<std::size_t>(nranks);
    case CollKind::Gather: return is_root ? count * static_cast<std::size_t>(nranks) : 0;
    case CollKind::Reduce: return is_root ? count : 0;
    default: return count;
  }
}

// NCCL gives a one-rank communicator's collective no kernel when its reduction is one of the
// device's plain ones (taskAppend: `op < ncclDevPreMulSum`: a built-in sum, product, min or max):
// the result is the input. An average (a pre-multiplied sum for floats, a sum divided after for
// integers) and a user's pre-multiplied sum get their kernel, even where it changes nothing.
bool runsWithoutKernel(const CommState& state, const CollectiveArgs& args) {
  return state.nranks() == 1 && !args.premul && args.op != RedOp::Avg &&
         (args.kind == CollKind::AllReduce || args.kind == CollKind::Reduce || args.kind == CollKind::Broadcast ||
          args.kind == CollKind::AllGather || args.kind == CollKind::ReduceScatter);
}

Status invalid(const char* api, const std::string& what) {
  return Status::error(ncclInvalidArgument, std::string(api) + ": " + what);
}

// count * nranks * element size must be addressable.
bool sizeOverflows(std::size_t count, int nranks, std::size_t element_size) {
  std::size_t bytes = 0;
  return __builtin_mul_overflow(count, static_cast<std::size_t>(nranks), &bytes) ||
         __builtin_mul_overflow(bytes, element_size, &bytes) ||
         bytes > static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());
}

// A buffer the call uses: not NULL, and inside its allocation when simgpu knows it.
Status checkBuffer(const char* api, const char* name, const void* ptr, std::size_t bytes) {
  if (bytes == 0) return Status::success();
  if (ptr == nullptr) return invalid(api, std::string(name) + " argument is NULL");
  const simgpu::PointerInfo info = simgpu::lookupPointer(ptr);
  if (info.kind != simgpu::MemoryKind::Pageable) {
    const auto offset = static_cast<std::size_t>(static_cast<const char*>(ptr) - static_cast<const char*>(info.base));
    if (offset + bytes > info.size) {
      char where[32];
      std::snprintf(where, sizeof(where), "%p", ptr);
      return invalid(api, std::string(name) + " " + where + " + " + std::to_string(bytes) +
                              " bytes runs past the end of its allocation of " + std::to_string(info.size) + " bytes");
    }
  }
  return Status::success();
}

Status checkCommon(const char* api, ncclComm_t comm, ncclDataType_t datatype, CommState** state) {
  Status why;
  *state = commFromHandle(comm, api, &why);
  if (*state == nullptr) return why;
  if (Status st = (*state)->usable(api); !st.ok()) return st;
  if (!isValidDatatype(datatype)) return invalid(api, "invalid type " + std::to_string(static_cast<int>(datatype)));
  return Status::success();
}

// Resolves `op` (built-in or made by ncclRedOpCreatePreMulSum on this communicator).
Status resolveOp(const char* api, CommState& state, ncclRedOp_t op, ncclDataType_t datatype, CollectiveArgs* args) {
  const int value = static_cast<int>(op);
  if (value < 0) return invalid(api, "invalid reduction operation " + std::to_string(value));
  if (value < ncclNumOps) {
    args->op = static_cast<RedOp>(value);
    return Status::success();
  }
  std::lock_guard lock(state.redop_mu);
  const auto index = static_cast<std::size_t>(value - ncclNumOps);
  if (index >= state.redops.size() || !state.redops[index].live) {
    return invalid(api, "reduction operation " + std::to_string(value) + " unknown to this communicator");
  }
  const UserRedOp& user = state.redops[index];
  if (user.datatype != datatype) {
    return invalid(api, std::string("reduction operation ") + std::to_string(value) + " was made for " +
                            datatypeName(user.datatype) + ", not " + datatypeName(datatype));
  }
  args->op = RedOp::Sum;
  args->premul = true;
  args->scalar_value = user.value;
  args->scalar_device = user.device_scalar;
  return Status::success();
}

ncclResult_t collective(const char* api, CollKind kind, const void* sendbuff, void* recvbuff, std::size_t count,
                        ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  CommState* state = nullptr;
  if (Status st = checkCommon(api, comm, datatype, &state); !st.ok()) return rejectCall(st);
  const int nranks = state->nranks();
  CollectiveArgs args;
  args.kind = kind;
  args.datatype = datatype;
  args.count = count;
  args.send = sendbuff;
  args.recv = recvbuff;
  if (rooted(kind)) {
    if (root < 0 || root >= nranks) {
      return rejectCall(invalid(api, "invalid root " + std::to_string(root) + " (root should be in the 0.." +
                                         std::to_string(nranks - 1) + " range)"));
    }
    args.root = root;
  }
  if (reduces(kind)) {
    if (Status st = resolveOp(api, *state, op, datatype, &args); !st.ok()) return rejectCall(st);
    const bool fp8 = datatype == ncclFloat8e4m3 || datatype == ncclFloat8e5m2;
    if (fp8 && simgpu::profile().device.compute_capability_major < 9) {
      return rejectCall(invalid(api, "FP8 reduction support begins with sm90 capable devices (the profile's compute_capability)"));
    }
  }
  const std::size_t es = datatypeSize(datatype);
  if (sizeOverflows(count, nranks, es)) return rejectCall(invalid(api, "count " + std::to_string(count) + " overflows the buffer size"));
  // NCCL drops empty collectives before they reach a stream.
  if (count == 0) return ncclSuccess;
  const bool is_root = state->rank() == root;
  if (Status st = checkBuffer(api, "sendbuff", sendbuff, sendElements(kind, count, nranks, is_root) * es); !st.ok()) return rejectCall(st);
  if (Status st = checkBuffer(api, "recvbuff", recvbuff, recvElements(kind, count, nranks, is_root) * es); !st.ok()) return rejectCall(st);

  PendingCall call;
  call.comm = comm->state;
  call.stream = stream;
  call.coll = args;
  call.kernel = collectiveKernelName(kind, args.op, args.premul, datatype, state->plan().cost.algorithm);
  call.bytes = collectiveBytes(kind, count, es, nranks);
  call.func = collKindName(kind);
  call.seq = state->issued_per_kind[static_cast<std::size_t>(kind)].fetch_add(1);
  ncclProfilerEventDescr_v5_t event{};
  event.type = ncclProfileCollApi;
  event.collApi.func = call.func;
  event.collApi.count = count;
  event.collApi.datatype = profilerTypeName(datatype);
  event.collApi.root = args.root;
  event.collApi.stream = stream;
  call.api_event = profileApiCall(*state, event);
  if (runsWithoutKernel(*state, args)) return submitWithoutKernel(call, count * es);
  return submitCall(std::move(call));
}

ncclResult_t pointToPoint(const char* api, bool is_send, const void* sendbuff, void* recvbuff, std::size_t count,
                          ncclDataType_t datatype, int peer, ncclComm_t comm, cudaStream_t stream) {
  CommState* state = nullptr;
  if (Status st = checkCommon(api, comm, datatype, &state); !st.ok()) return rejectCall(st);
  if (peer < 0 || peer >= state->nranks()) {
    return rejectCall(invalid(api, "invalid peer " + std::to_string(peer) + " (peer should be in the 0.." +
                                       std::to_string(state->nranks() - 1) + " range)"));
  }
  const std::size_t es = datatypeSize(datatype);
  if (sizeOverflows(count, 1, es)) return rejectCall(invalid(api, "count " + std::to_string(count) + " overflows the buffer size"));
  const void* buffer = is_send ? sendbuff : recvbuff;
  if (Status st = checkBuffer(api, is_send ? "sendbuff" : "recvbuff", buffer, count * es); !st.ok()) return rejectCall(st);
  PendingCall call;
  call.comm = comm->state;
  call.stream = stream;
  call.is_p2p = true;
  call.p2p = P2pArgs{is_send, peer, sendbuff, recvbuff, count, datatype, 0};
  call.kernel = kSendRecvKernel;
  call.bytes = count * es;
  call.func = is_send ? "Send" : "Recv";
  ncclProfilerEventDescr_v5_t event{};
  event.type = ncclProfileP2pApi;
  event.p2pApi.func = call.func;
  event.p2pApi.count = count;
  event.p2pApi.datatype = profilerTypeName(datatype);
  event.p2pApi.stream = stream;
  call.api_event = profileApiCall(*state, event);
  // Empty sends and receives still match their peer's, as in NCCL.
  return submitCall(std::move(call));
}

}  // namespace

SIMGPU_NCCL_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclAllReduce", CollKind::AllReduce, sendbuff, recvbuff, count, datatype, op, -1, comm, stream);
}

SIMGPU_NCCL_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclReduce", CollKind::Reduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

SIMGPU_NCCL_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclBroadcast", CollKind::Broadcast, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream);
}

// The deprecated in-place broadcast.
SIMGPU_NCCL_API(ncclResult_t, ncclBcast, void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                cudaStream_t stream);
ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclBcast", CollKind::Broadcast, buff, buff, count, datatype, ncclSum, root, comm, stream);
}

SIMGPU_NCCL_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff, size_t sendcount,
                ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclAllGather", CollKind::AllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum, -1, comm, stream);
}

SIMGPU_NCCL_API(ncclResult_t, ncclReduceScatter, const void* sendbuff, void* recvbuff, size_t recvcount,
                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclReduceScatter", CollKind::ReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, -1, comm, stream);
}

SIMGPU_NCCL_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream) {
  return collective("ncclAlltoAll", CollKind::AlltoAll, sendbuff, recvbuff, count, datatype, ncclSum, -1, comm, stream);
}

SIMGPU_NCCL_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclGather", CollKind::Gather, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream);
}

SIMGPU_NCCL_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclScatter", CollKind::Scatter, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream);
}

SIMGPU_NCCL_API(ncclResult_t, ncclSend, const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return pointToPoint("ncclSend", true, sendbuff, nullptr, count, datatype, peer, comm, stream);
}

SIMGPU_NCCL_API(ncclResult_t, ncclRecv, void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                cudaStream_t stream);
ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return pointToPoint("ncclRecv", false, nullptr, recvbuff, count, datatype, peer, comm, stream);
}
