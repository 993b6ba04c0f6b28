// Fixed-size records: what the collector's hot path appends to its per-thread buffers and
// what StoreWriter::append() turns into rows (docs/trace.md, "Records").
//
// Every record is exactly 32 bytes, trivially copyable, and starts with its RecordType. They
// stay that small because
//   - a host call and the GPU work it issued are two records joined by correlation id
//     (ApiCallRecord on the calling thread, OpRecord from whichever thread learns the GPU
//     times: the CUPTI buffer thread or the event poller);
//   - names are interned (StringId) and so is a kernel's launch shape: name, grid and block
//     travel as one ShapeId, since a training step launches the same few shapes every step;
//   - streams, events and communicators are small catalog ids, not 64-bit handles;
//   - the calling thread is implied by the buffer the record was pushed to;
//   - what is rare gets a record of its own (collective arguments, pointer arguments).
// Timestamps are full 64-bit CLOCK_MONOTONIC nanoseconds (no deltas): a record is readable
// on its own, so a dropped record never corrupts its neighbours.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "syncopate/trace/ids.hpp"
#include "syncopate/trace/types.hpp"

namespace syncopate::trace {

inline constexpr std::size_t kRecordSize = 32;

// Values are stable within a process only (records are never stored as such).
enum class RecordType : std::uint8_t {
  ApiCall = 1,
  Op = 2,
  Collective = 3,
  OpArgs = 4,
  Nvtx = 5,
  Alloc = 6,
  Free = 7,
  NcclOp = 8,
  NcclKernelChannel = 9,
};

// A host API call the collector intercepted (row of `api_calls`). The thread is the buffer's.
struct ApiCallRecord {
  RecordType type = RecordType::ApiCall;
  ApiDomain domain = ApiDomain::CudaRuntime;
  std::uint16_t pad = 0;
  StringId name_id = kNoString;      // e.g. "cudaLaunchKernel", "ncclAllReduce"
  std::uint32_t correlation_id = 0;  // joins to ops/collectives/op_args; 0: issued no GPU work
  std::int32_t result = 0;           // the call's return code
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

// One GPU op, or the host-blocking window of a sync (row of `ops`). `detail` depends on kind:
//   Kernel, Collective, P2P    ShapeId (kernel name, grid, block; Catalog::internShape)
//   Memcpy, Memset             bits 0..31 of the byte count (bits 32..39 in bytes_hi)
//   EventRecord, StreamWait    EventId
//   HostSync on an event       EventId (stream_id: the stream it was recorded on, if known)
//   HostSync on device/context the device ordinal (stream_id = kNoStream)
// The device comes from the stream (Catalog::registerStream) except for device-wide syncs.
// Build them with the factories below rather than by hand.
struct OpRecord {
  RecordType type = RecordType::Op;
  OpKind kind = OpKind::Kernel;
  std::uint8_t sub = 0;       // MemcpyKind (Memcpy) or SyncKind (HostSync), | kBytesClamped
  std::uint8_t bytes_hi = 0;  // Memcpy/Memset: bits 32..39 of the byte count
  StreamId stream_id = kNoStream;
  std::uint32_t correlation_id = 0;
  std::uint32_t detail = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;

  // Byte counts up to 2^40-1 (1 TiB) are exact; larger ones are clamped and flagged, and the
  // writer counts them (`counters`: ops_bytes_clamped) instead of storing a wrong number.
  static constexpr std::uint64_t kMaxBytes = (std::uint64_t{1} << 40) - 1;
  static constexpr std::uint8_t kBytesClamped = 0x80;

  // Kernel, or the GPU side of a collective (Collective) or send/recv (P2P).
  static constexpr OpRecord launch(OpKind kind, StreamId stream, std::uint32_t correlation, ShapeId shape,
                                   std::int64_t start, std::int64_t end) {
    OpRecord r;
    r.kind = kind;
    r.stream_id = stream;
    r.correlation_id = correlation;
    r.detail = shape;
    r.start_ns = start;
    r.end_ns = end;
    return r;
  }
  static constexpr OpRecord memcpy(MemcpyKind kind, StreamId stream, std::uint32_t correlation, std::uint64_t bytes,
                                   std::int64_t start, std::int64_t end) {
    OpRecord r = withBytes(OpKind::Memcpy, stream, correlation, bytes, start, end);
    r.sub = static_cast<std::uint8_t>(r.sub | static_cast<std::uint8_t>(kind));
    return r;
  }
  static constexpr OpRecord memset(StreamId stream, std::uint32_t correlation, std::uint64_t bytes,
                                   std::int64_t start, std::int64_t end) {
    return withBytes(OpKind::Memset, stream, correlation, bytes, start, end);
  }
  // EventRecord or StreamWait.
  static constexpr OpRecord event(OpKind kind, StreamId stream, std::uint32_t correlation, EventId event,
                                  std::int64_t start, std::int64_t end) {
    OpRecord r;
    r.kind = kind;
    r.stream_id = stream;
    r.correlation_id = correlation;
    r.detail = event;
    r.start_ns = start;
    r.end_ns = end;
    return r;
  }
  static constexpr OpRecord syncStream(StreamId stream, std::uint32_t correlation, std::int64_t start,
                                       std::int64_t end) {
    return sync(SyncKind::Stream, stream, correlation, 0, start, end);
  }
  // `recorded_on`: the stream the event was last recorded on, kNoStream when not known.
  static constexpr OpRecord syncEvent(EventId event, StreamId recorded_on, std::uint32_t correlation,
                                      std::int64_t start, std::int64_t end) {
    return sync(SyncKind::Event, recorded_on, correlation, event, start, end);
  }
  // SyncKind::Device or SyncKind::Context.
  static constexpr OpRecord syncDevice(SyncKind kind, std::uint32_t device, std::uint32_t correlation,
                                       std::int64_t start, std::int64_t end) {
    return sync(kind, kNoStream, correlation, device, start, end);
  }

  constexpr std::uint64_t bytes() const { return (std::uint64_t{bytes_hi} << 32) | detail; }
  constexpr bool bytesClamped() const { return (sub & kBytesClamped) != 0; }
  constexpr MemcpyKind memcpyKind() const { return static_cast<MemcpyKind>(sub & ~kBytesClamped); }
  constexpr SyncKind syncKind() const { return static_cast<SyncKind>(sub); }

 private:
  static constexpr OpRecord withBytes(OpKind kind, StreamId stream, std::uint32_t correlation, std::uint64_t bytes,
                                      std::int64_t start, std::int64_t end) {
    OpRecord r;
    r.kind = kind;
    r.stream_id = stream;
    r.correlation_id = correlation;
    if (bytes > kMaxBytes) {
      bytes = kMaxBytes;
      r.sub = kBytesClamped;
    }
    r.detail = static_cast<std::uint32_t>(bytes);
    r.bytes_hi = static_cast<std::uint8_t>(bytes >> 32);
    r.start_ns = start;
    r.end_ns = end;
    return r;
  }
  static constexpr OpRecord sync(SyncKind kind, StreamId stream, std::uint32_t correlation, std::uint32_t detail,
                                 std::int64_t start, std::int64_t end) {
    OpRecord r;
    r.kind = OpKind::HostSync;
    r.sub = static_cast<std::uint8_t>(kind);
    r.stream_id = stream;
    r.correlation_id = correlation;
    r.detail = detail;
    r.start_ns = start;
    r.end_ns = end;
    return r;
  }
};

// The arguments of one NCCL collective or send/recv (row of `collectives`), joined to its op
// by correlation id. Communicator id, rank and size come from the catalog entry `comm`.
struct CollectiveRecord {
  RecordType type = RecordType::Collective;
  CollType coll_type = CollType::Unknown;
  DataType dtype = DataType::Unknown;
  RedOp red_op = RedOp::None;
  std::uint32_t correlation_id = 0;
  CommId comm = kNoComm;
  std::int32_t root_or_peer = -1;  // root of rooted collectives, peer of send/recv; -1: none
  std::uint32_t seq = 0;           // low 32 bits of the per-communicator sequence number;
                                   // the writer extends it to 64 bits per communicator
  std::uint32_t group_id = 0;      // shared by the calls of one ncclGroupStart/End; 0: none
  std::uint64_t count = 0;         // elements
};

// The argument index of the one `op_args` row a kernel launch carries when the collector could
// not learn the kernel's parameter layout (so which of its arguments are pointers is unknown).
inline constexpr std::uint16_t kUnknownLayoutArgIndex = 0xFFFF;
// The argument index of a word of a driver launch's packed parameter buffer whose layout is
// unknown: this plus the word's index in the buffer (buffers hold at most 32 KiB).
inline constexpr std::uint16_t kPackedWordArgIndex = 0x8000;

// Up to two pointer arguments of an op (rows of `op_args`), joined to it by correlation id.
// A kernel with more pointer parameters pushes several. Argument index conventions:
//   Kernel: the parameter's index; Memcpy: 0 = dst, 1 = src; Memset: 0 = dst;
//   Collective/P2P: 0 = sendbuff, 1 = recvbuff.
struct OpArgsRecord {
  RecordType type = RecordType::OpArgs;
  std::uint8_t count = 0;  // 1 or 2
  std::uint16_t index[2] = {0, 0};
  std::uint16_t pad0 = 0;
  std::uint32_t correlation_id = 0;
  std::uint32_t pad1 = 0;
  std::uint64_t address[2] = {0, 0};
};

// An NVTX range (push/pop or start/end) or mark (row of `nvtx_ranges`), pushed when it ends.
struct NvtxRecord {
  RecordType type = RecordType::Nvtx;
  std::uint8_t flags = 0;  // kMark, kHasColor
  std::uint16_t depth = kNoDepth;  // push/pop nesting depth from 0; kNoDepth otherwise
  StringId name_id = kNoString;
  StringId domain_id = kNoString;  // kNoString: the default domain
  std::uint32_t color = 0;         // ARGB, meaningful with kHasColor
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;         // == start_ns for a mark

  static constexpr std::uint8_t kMark = 1;
  static constexpr std::uint8_t kHasColor = 2;
  static constexpr std::uint16_t kNoDepth = 0xFFFF;
};

// A memory allocation (row of `allocations`); its FreeRecord sets free_ns.
struct AllocRecord {
  RecordType type = RecordType::Alloc;
  AllocKind kind = AllocKind::Device;
  std::int16_t device = -1;  // CUDA device ordinal; -1 for host memory
  std::uint32_t pad = 0;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  std::int64_t time_ns = 0;
};

struct FreeRecord {
  RecordType type = RecordType::Free;
  std::uint8_t pad0[7] = {};
  std::uint64_t address = 0;
  std::int64_t time_ns = 0;
  std::uint64_t pad1 = 0;
};

// NCCL's own description of a collective or send/recv, from its profiler plugin (row of
// `nccl_ops`), joined to the interposed call by correlation id (never 0).
struct NcclOpRecord {
  RecordType type = RecordType::NcclOp;
  std::uint8_t flags = 0;  // kHasSeq: a collective (send/recv have no seqNumber, algorithm or protocol)
  std::uint8_t channels = 0;
  std::uint8_t warps = 0;
  std::uint32_t correlation_id = 0;
  StringId func_id = kNoString;       // NCCL's name: "AllReduce", "Send", ...
  StringId algorithm_id = kNoString;  // "RING", "TREE", ...; kNoString: not reported
  StringId protocol_id = kNoString;   // "LL", "LL128", "SIMPLE"; kNoString: not reported
  std::uint32_t pad = 0;
  std::uint64_t nccl_seq = 0;  // NCCL's seqNumber (per communicator and function), with kHasSeq

  static constexpr std::uint8_t kHasSeq = 1;
};

// One edge of an NCCL kernel channel's GPU-side timing (KernelCh event; row of
// `nccl_kernel_channels`): its start and its stop arrive in separate callbacks and become one row.
struct NcclKernelChannelRecord {
  RecordType type = RecordType::NcclKernelChannel;
  std::uint8_t edge = kStart;
  std::uint8_t channel = 0;
  std::uint8_t pad0 = 0;
  std::uint32_t correlation_id = 0;
  std::uint64_t timer = 0;  // the GPU's global timer (ns) as NCCL reports it
  std::uint64_t pad1[2] = {0, 0};

  static constexpr std::uint8_t kStart = 0;
  static constexpr std::uint8_t kStop = 1;
};

// Any of the above, as the element type of a per-thread SpscRing. Reading: switch on type(),
// then as<T>() (a 32-byte copy, free after optimisation, and no aliasing questions).
class alignas(8) Record {
 public:
  Record() noexcept = default;  // uninitialised: ring storage is never touched until pushed
  template <class T>
    requires(sizeof(T) == kRecordSize && std::is_trivially_copyable_v<T>)
  Record(const T& record) noexcept {  // NOLINT(google-explicit-constructor): records convert freely
    std::memcpy(bytes_, &record, kRecordSize);
  }

  RecordType type() const noexcept { return static_cast<RecordType>(bytes_[0]); }

  template <class T>
    requires(sizeof(T) == kRecordSize && std::is_trivially_copyable_v<T>)
  T as() const noexcept {
    T out;
    std::memcpy(&out, bytes_, kRecordSize);
    return out;
  }

 private:
  unsigned char bytes_[kRecordSize];
};

static_assert(sizeof(Record) == kRecordSize);
static_assert(sizeof(ApiCallRecord) == kRecordSize && std::is_trivially_copyable_v<ApiCallRecord>);
static_assert(sizeof(OpRecord) == kRecordSize && std::is_trivially_copyable_v<OpRecord>);
static_assert(sizeof(CollectiveRecord) == kRecordSize && std::is_trivially_copyable_v<CollectiveRecord>);
static_assert(sizeof(OpArgsRecord) == kRecordSize && std::is_trivially_copyable_v<OpArgsRecord>);
static_assert(sizeof(NvtxRecord) == kRecordSize && std::is_trivially_copyable_v<NvtxRecord>);
static_assert(sizeof(AllocRecord) == kRecordSize && std::is_trivially_copyable_v<AllocRecord>);
static_assert(sizeof(FreeRecord) == kRecordSize && std::is_trivially_copyable_v<FreeRecord>);
static_assert(sizeof(NcclOpRecord) == kRecordSize && std::is_trivially_copyable_v<NcclOpRecord>);
static_assert(sizeof(NcclKernelChannelRecord) == kRecordSize && std::is_trivially_copyable_v<NcclKernelChannelRecord>);

}  // namespace syncopate::trace
