#include "syncopate/trace/types.hpp"

namespace syncopate::trace {

std::string_view toString(OpKind k) {
  switch (k) {
    case OpKind::Kernel: return "kernel";
    case OpKind::Memcpy: return "memcpy";
    case OpKind::Memset: return "memset";
    case OpKind::Collective: return "collective";
    case OpKind::P2P: return "p2p";
    case OpKind::EventRecord: return "event_record";
    case OpKind::StreamWait: return "stream_wait";
    case OpKind::HostSync: return "host_sync";
  }
  return "unknown";
}

std::string_view toString(MemcpyKind k) {
  switch (k) {
    case MemcpyKind::Unknown: return "unknown";
    case MemcpyKind::HostToDevice: return "HtoD";
    case MemcpyKind::DeviceToHost: return "DtoH";
    case MemcpyKind::DeviceToDevice: return "DtoD";
    case MemcpyKind::HostToHost: return "HtoH";
    case MemcpyKind::PeerToPeer: return "PtoP";
  }
  return "unknown";
}

std::string_view toString(CollType t) {
  switch (t) {
    case CollType::Unknown: return "unknown";
    case CollType::AllReduce: return "AllReduce";
    case CollType::Broadcast: return "Broadcast";
    case CollType::Reduce: return "Reduce";
    case CollType::AllGather: return "AllGather";
    case CollType::ReduceScatter: return "ReduceScatter";
    case CollType::Send: return "Send";
    case CollType::Recv: return "Recv";
    case CollType::AllToAll: return "AllToAll";
    case CollType::Barrier: return "Barrier";
    case CollType::Gather: return "Gather";
    case CollType::Scatter: return "Scatter";
  }
  return "unknown";
}

std::string_view toString(DataType t) {
  switch (t) {
    case DataType::Int8: return "int8";
    case DataType::Uint8: return "uint8";
    case DataType::Int32: return "int32";
    case DataType::Uint32: return "uint32";
    case DataType::Int64: return "int64";
    case DataType::Uint64: return "uint64";
    case DataType::Float16: return "float16";
    case DataType::Float32: return "float32";
    case DataType::Float64: return "float64";
    case DataType::Bfloat16: return "bfloat16";
    case DataType::Float8e4m3: return "float8e4m3";
    case DataType::Float8e5m2: return "float8e5m2";
    case DataType::Unknown: return "unknown";
  }
  return "unknown";
}

std::string_view toString(RedOp op) {
  switch (op) {
    case RedOp::Sum: return "sum";
    case RedOp::Prod: return "prod";
    case RedOp::Max: return "max";
    case RedOp::Min: return "min";
    case RedOp::Avg: return "avg";
    case RedOp::None: return "none";
    case RedOp::Unknown: return "unknown";
  }
  return "unknown";
}

std::string_view toString(ApiDomain d) {
  switch (d) {
    case ApiDomain::CudaRuntime: return "cuda_runtime";
    case ApiDomain::CudaDriver: return "cuda_driver";
    case ApiDomain::Nccl: return "nccl";
    case ApiDomain::Nvtx: return "nvtx";
    case ApiDomain::Syncopate: return "syncopate";
  }
  return "unknown";
}

std::string_view toString(SyncKind k) {
  switch (k) {
    case SyncKind::Unknown: return "unknown";
    case SyncKind::Stream: return "stream";
    case SyncKind::Event: return "event";
    case SyncKind::Device: return "device";
    case SyncKind::Context: return "context";
  }
  return "unknown";
}

std::string_view toString(Severity s) {
  switch (s) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "unknown";
}

std::string_view toString(AllocKind k) {
  switch (k) {
    case AllocKind::Device: return "device";
    case AllocKind::Pinned: return "pinned";
    case AllocKind::Managed: return "managed";
    case AllocKind::Nccl: return "nccl";
    case AllocKind::Async: return "async";
  }
  return "unknown";
}

}  // namespace syncopate::trace
