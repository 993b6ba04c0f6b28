// One struct per table of the run store (docs/store-schema.md), with std::optional where the
// column is nullable. The reader hands them to per-row callbacks (one reused object per
// table scan, no allocation per row); importers write them with StoreWriter's row API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "syncopate/trace/ids.hpp"
#include "syncopate/trace/types.hpp"

namespace syncopate::trace {

struct ApiCallRow {
  std::int64_t id = 0;  // assigned by the writer
  ThreadId thread_id = kNoThread;
  ApiDomain domain = ApiDomain::CudaRuntime;
  StringId name_id = kNoString;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::optional<std::int64_t> correlation_id;
  std::optional<std::int64_t> result;
  friend bool operator==(const ApiCallRow&, const ApiCallRow&) = default;
};

struct OpRow {
  std::int64_t id = 0;  // assigned by the writer
  OpKind kind = OpKind::Kernel;
  std::optional<std::int32_t> device_id;  // NULL only for a HostSync whose device is unknown
  std::optional<StreamId> stream_id;      // NULL for device-wide HostSync
  StringId name_id = kNoString;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::optional<std::int64_t> correlation_id;
  std::optional<std::int64_t> bytes;  // Memcpy, Memset
  std::optional<MemcpyKind> memcpy_kind;
  std::optional<Dim3> grid;   // Kernel (and Collective/P2P kernels when known)
  std::optional<Dim3> block;
  std::optional<EventId> event_id;  // EventRecord, StreamWait, HostSync on an event
  std::optional<SyncKind> sync_kind;  // HostSync
  friend bool operator==(const OpRow&, const OpRow&) = default;
};

struct CollectiveRow {
  std::int64_t correlation_id = 0;  // the op's correlation id
  std::uint64_t comm_id = 0;
  std::optional<std::int32_t> comm_rank;
  std::optional<std::int32_t> comm_size;
  std::uint64_t seq = 0;
  CollType coll_type = CollType::Unknown;
  std::optional<DataType> dtype;
  std::optional<RedOp> red_op;
  std::optional<std::uint64_t> count;
  std::optional<std::uint64_t> bytes;
  std::optional<std::int32_t> root_or_peer;
  std::optional<std::uint32_t> group_id;
  friend bool operator==(const CollectiveRow&, const CollectiveRow&) = default;
};

// NCCL's own view of a collective or send/recv (`nccl_ops`, schema 1.1), from its profiler plugin.
struct NcclOpRow {
  std::int64_t correlation_id = 0;  // the collectives row's
  StringId func_id = kNoString;
  std::optional<std::uint64_t> nccl_seq;  // collectives only
  std::optional<StringId> algorithm_id;
  std::optional<StringId> protocol_id;
  std::optional<std::uint32_t> channels;
  std::optional<std::uint32_t> warps;
  friend bool operator==(const NcclOpRow&, const NcclOpRow&) = default;
};

// GPU-side timing of one channel of an NCCL operation's kernel (`nccl_kernel_channels`, schema 1.1).
struct NcclKernelChannelRow {
  std::int64_t correlation_id = 0;
  std::uint32_t channel = 0;
  std::optional<std::uint64_t> start_timer;  // the GPU's global timer (ns), see docs/store-schema.md
  std::optional<std::uint64_t> end_timer;
  friend bool operator==(const NcclKernelChannelRow&, const NcclKernelChannelRow&) = default;
};

struct OpArgRow {
  std::int64_t correlation_id = 0;
  std::uint32_t arg_index = 0;
  std::uint64_t address = 0;
  friend bool operator==(const OpArgRow&, const OpArgRow&) = default;
};

struct NvtxRangeRow {
  std::int64_t id = 0;  // assigned by the writer
  std::optional<ThreadId> thread_id;
  std::optional<StringId> domain_id;  // NULL: the default domain
  StringId name_id = kNoString;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;  // == start_ns for a mark
  std::optional<std::uint32_t> depth;
  std::optional<std::uint32_t> color;
  std::optional<std::uint32_t> category;
  friend bool operator==(const NvtxRangeRow&, const NvtxRangeRow&) = default;
};

struct AllocationRow {
  std::int64_t id = 0;  // assigned by the writer
  std::optional<std::int32_t> device_id;  // NULL for host memory
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  AllocKind kind = AllocKind::Device;
  std::int64_t alloc_ns = 0;
  std::optional<std::int64_t> free_ns;
  friend bool operator==(const AllocationRow&, const AllocationRow&) = default;
};

struct StreamRow {
  StreamId id = kNoStream;
  std::int32_t device_id = 0;
  std::optional<std::uint64_t> handle;
  std::optional<std::uint32_t> flags;
  std::optional<std::int32_t> priority;
  std::string name;
  friend bool operator==(const StreamRow&, const StreamRow&) = default;
};

struct DeviceRow {
  std::int32_t id = 0;
  std::string name;
  std::string uuid;
  std::string pci_bus_id;
  std::optional<std::int32_t> sm_count;
  std::optional<std::int64_t> memory_bytes;
  friend bool operator==(const DeviceRow&, const DeviceRow&) = default;
};

struct ThreadRow {
  ThreadId id = kNoThread;
  std::int64_t tid = 0;
  std::string name;
  friend bool operator==(const ThreadRow&, const ThreadRow&) = default;
};

struct CommunicatorRow {
  std::uint64_t comm_id = 0;
  std::int32_t comm_rank = 0;
  std::int32_t comm_size = 0;
  std::optional<std::int32_t> device_id;
  std::optional<std::uint64_t> handle;
  std::optional<std::int64_t> init_ns;
  std::optional<std::uint64_t> parent_comm_id;
  friend bool operator==(const CommunicatorRow&, const CommunicatorRow&) = default;
};

struct CounterRow {
  std::string name;
  std::int64_t value = 0;
  friend bool operator==(const CounterRow&, const CounterRow&) = default;
};

struct DiagnosticRow {
  std::int64_t id = 0;
  Severity severity = Severity::Info;
  std::string source;
  std::string message;
  std::int64_t count = 1;
  std::optional<std::int64_t> first_ns;
  friend bool operator==(const DiagnosticRow&, const DiagnosticRow&) = default;
};

}  // namespace syncopate::trace
