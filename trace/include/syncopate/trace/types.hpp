// The event vocabulary shared by every part of Syncopate: collector, importers, analyzer,
// tuner and GUI all speak these enums. Their integer values are stored in run stores
// (docs/store-schema.md), so they are part of the on-disk format: append, never renumber.
#pragma once

#include <cstdint>
#include <string_view>

namespace syncopate::trace {

// What a row of the `ops` table is. GPU-side work has GPU start/end times; HostSync rows are
// the host-blocking window of a synchronising call (cudaStreamSynchronize & co).
enum class OpKind : std::uint8_t {
  Kernel = 1,
  Memcpy = 2,
  Memset = 3,
  Collective = 4,   // NCCL collective (its GPU kernel); details in `collectives`
  P2P = 5,          // NCCL send/recv; details in `collectives`
  EventRecord = 6,  // cudaEventRecord: a zero-length marker on its stream
  StreamWait = 7,   // cudaStreamWaitEvent: the stream waits for an event
  HostSync = 8,     // host blocked on a stream, event or the whole device
};

// What an op does to the GPU, the classification every metric and the what-if model use (HTA's
// kernel types, plus markers). Communication = NCCL collectives and p2p (and kernels named
// nccl*), Memory = memcpy/memset, Compute = every other kernel, Marker = zero-length event
// record/wait. Not stored: derived from the op's kind and name when a run is loaded.
enum class OpClass : std::uint8_t { Compute = 0, Communication = 1, Memory = 2, Marker = 3 };

enum class MemcpyKind : std::uint8_t {
  Unknown = 0,
  HostToDevice = 1,
  DeviceToHost = 2,
  DeviceToDevice = 3,
  HostToHost = 4,
  PeerToPeer = 5,
};

// Collective/p2p operation. Values are Syncopate's own, not NCCL's enum.
enum class CollType : std::uint8_t {
  Unknown = 0,
  AllReduce = 1,
  Broadcast = 2,
  Reduce = 3,
  AllGather = 4,
  ReduceScatter = 5,
  Send = 6,
  Recv = 7,
  AllToAll = 8,
  Barrier = 9,
  Gather = 10,   // ncclGather (rooted)
  Scatter = 11,  // ncclScatter (rooted)
};

// Element types, in the order of ncclDataType_t (NCCL 2.28).
enum class DataType : std::uint8_t {
  Int8 = 0,
  Uint8 = 1,
  Int32 = 2,
  Uint32 = 3,
  Int64 = 4,
  Uint64 = 5,
  Float16 = 6,
  Float32 = 7,
  Float64 = 8,
  Bfloat16 = 9,
  Float8e4m3 = 10,
  Float8e5m2 = 11,
  Unknown = 255,
};

// Reductions, in the order of ncclRedOp_t's built-in operations.
enum class RedOp : std::uint8_t { Sum = 0, Prod = 1, Max = 2, Min = 3, Avg = 4, None = 254, Unknown = 255 };

// Which API a host call belongs to.
enum class ApiDomain : std::uint8_t { CudaRuntime = 1, CudaDriver = 2, Nccl = 3, Nvtx = 4, Syncopate = 5 };

// What a HostSync op waited on.
enum class SyncKind : std::uint8_t { Unknown = 0, Stream = 1, Event = 2, Device = 3, Context = 4 };

enum class Severity : std::uint8_t { Info = 0, Warning = 1, Error = 2 };

// What kind of memory an `allocations` row describes.
enum class AllocKind : std::uint8_t {
  Device = 1,   // cudaMalloc, cuMemAlloc
  Pinned = 2,   // page-locked host memory (cudaMallocHost, cudaHostAlloc)
  Managed = 3,  // cudaMallocManaged
  Nccl = 4,     // ncclMemAlloc
  Async = 5,    // stream-ordered: cudaMallocAsync / cudaFreeAsync
};

// Size in bytes of one element; 0 for Unknown.
constexpr std::uint32_t dataTypeSize(DataType t) {
  switch (t) {
    case DataType::Int8:
    case DataType::Uint8:
    case DataType::Float8e4m3:
    case DataType::Float8e5m2: return 1;
    case DataType::Float16:
    case DataType::Bfloat16: return 2;
    case DataType::Int32:
    case DataType::Uint32:
    case DataType::Float32: return 4;
    case DataType::Int64:
    case DataType::Uint64:
    case DataType::Float64: return 8;
    case DataType::Unknown: return 0;
  }
  return 0;
}

std::string_view toString(OpKind k);
std::string_view toString(MemcpyKind k);
std::string_view toString(CollType t);
std::string_view toString(DataType t);
std::string_view toString(RedOp op);
std::string_view toString(ApiDomain d);
std::string_view toString(SyncKind k);
std::string_view toString(Severity s);
std::string_view toString(AllocKind k);

}  // namespace syncopate::trace
