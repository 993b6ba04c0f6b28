// Issues the NCCL call that a CollectiveArgs describes, for tests that go through the API.
#pragma once

#include "simgpu/nccl/collective_task.hpp"

#include <nccl.h>

namespace simgpu::nccl::testing {

inline ncclResult_t issue(const CollectiveArgs& a, const void* send, void* recv, ncclComm_t comm, cudaStream_t stream,
                          ncclRedOp_t op_override = ncclNumOps) {
  const ncclRedOp_t op = op_override != ncclNumOps ? op_override : static_cast<ncclRedOp_t>(a.op);
  switch (a.kind) {
    case CollKind::AllReduce: return ncclAllReduce(send, recv, a.count, a.datatype, op, comm, stream);
    case CollKind::Reduce: return ncclReduce(send, recv, a.count, a.datatype, op, a.root, comm, stream);
    case CollKind::ReduceScatter: return ncclReduceScatter(send, recv, a.count, a.datatype, op, comm, stream);
    case CollKind::Broadcast: return ncclBroadcast(send, recv, a.count, a.datatype, a.root, comm, stream);
    case CollKind::AllGather: return ncclAllGather(send, recv, a.count, a.datatype, comm, stream);
    case CollKind::AlltoAll: return ncclAlltoAll(send, recv, a.count, a.datatype, comm, stream);
    case CollKind::Gather: return ncclGather(send, recv, a.count, a.datatype, a.root, comm, stream);
    case CollKind::Scatter: return ncclScatter(send, recv, a.count, a.datatype, a.root, comm, stream);
  }
  return ncclInternalError;
}

}  // namespace simgpu::nccl::testing
