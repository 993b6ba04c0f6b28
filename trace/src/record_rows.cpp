#include "record_rows.hpp"

#include <string>

namespace syncopate::trace::detail {

namespace {

// Names of ops that have none of their own, by slot of RecordRows::fixed_names_.
enum FixedName : std::size_t {
  kMemcpyUnknown = 0,  // + MemcpyKind value, up to PeerToPeer (5)
  kMemset = 6,
  kEventRecord = 7,
  kStreamWait = 8,
  kSyncUnknown = 9,  // + SyncKind value, up to Context (4)
  kUnknownKernel = 14,
};

constexpr const char* kMemcpyNames[] = {"Memcpy", "Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD", "Memcpy HtoH",
                                        "Memcpy PtoP"};
constexpr const char* kSyncNames[] = {"Synchronize", "Stream synchronize", "Event synchronize", "Device synchronize",
                                      "Context synchronize"};

std::optional<std::int64_t> correlation(std::uint32_t id) {
  if (id == 0) return std::nullopt;
  return id;
}

}  // namespace

std::uint64_t extendSequence(std::uint64_t last, bool seen, std::uint32_t low) noexcept {
  if (!seen) return low;
  constexpr std::uint64_t kWrap = std::uint64_t{1} << 32;
  constexpr std::uint64_t kHalf = kWrap / 2;
  std::uint64_t candidate = (last & ~(kWrap - 1)) | low;
  if (candidate + kHalf < last) {
    candidate += kWrap;  // the counter wrapped since `last`
  } else if (candidate > last + kHalf && candidate >= kWrap) {
    candidate -= kWrap;  // a late number from before the latest wrap
  }
  return candidate;
}

NcclOpRow ncclOpRow(const NcclOpRecord& r) noexcept {
  const auto reported = [](StringId id) { return id != kNoString ? std::optional<StringId>(id) : std::nullopt; };
  NcclOpRow row;
  row.correlation_id = r.correlation_id;
  row.func_id = r.func_id;
  if ((r.flags & NcclOpRecord::kHasSeq) != 0) row.nccl_seq = r.nccl_seq;
  row.algorithm_id = reported(r.algorithm_id);
  row.protocol_id = reported(r.protocol_id);
  row.channels = r.channels;
  row.warps = r.warps;
  return row;
}

NcclKernelChannelRow ncclKernelChannelRow(const NcclKernelChannelRecord& r) noexcept {
  NcclKernelChannelRow row;
  row.correlation_id = r.correlation_id;
  row.channel = r.channel;
  if (r.edge == NcclKernelChannelRecord::kStart) {
    row.start_timer = r.timer;
  } else {
    row.end_timer = r.timer;
  }
  return row;
}

StringRow stringRow(const Catalog& catalog, std::uint32_t id) { return {id, std::string(catalog.string(id))}; }

StreamRow streamRow(const Catalog& catalog, std::uint32_t id) {
  const CatalogStream info = catalog.stream(id).value_or(CatalogStream{});
  return {id, info.device, info.handle, info.flags, info.priority, std::string(catalog.string(info.name_id))};
}

ThreadRow threadRow(const Catalog& catalog, std::uint32_t id) {
  const CatalogThread info = catalog.thread(id).value_or(CatalogThread{});
  return {id, info.tid, std::string(catalog.string(info.name_id))};
}

DeviceRow deviceRow(const Catalog& catalog, std::uint32_t index) {
  const CatalogDevice info = catalog.deviceAt(index).value_or(CatalogDevice{});
  return {info.ordinal,
          std::string(catalog.string(info.name_id)),
          std::string(catalog.string(info.uuid_id)),
          std::string(catalog.string(info.pci_bus_id_id)),
          info.sm_count,
          info.memory_bytes};
}

CommunicatorRow communicatorRow(const Catalog& catalog, std::uint32_t id) {
  const CatalogCommunicator info = catalog.communicator(id).value_or(CatalogCommunicator{});
  return {info.comm_id, info.comm_rank, info.comm_size, info.device, info.handle, info.init_ns, info.parent_comm_id};
}

StringId RecordRows::fixedName(std::size_t which, const char* text) noexcept {
  if (fixed_names_[which] == kNoString) fixed_names_[which] = catalog_.intern(text);
  return fixed_names_[which];
}

ApiCallRow RecordRows::apiCall(ThreadId thread, const ApiCallRecord& r) noexcept {
  if (thread == kNoThread || thread > catalog_.threadCount()) ++unknown_references_;  // api_calls.thread_id dangles
  ApiCallRow row;
  row.thread_id = thread;
  row.domain = r.domain;
  row.name_id = r.name_id;
  row.start_ns = r.start_ns;
  row.end_ns = r.end_ns;
  row.correlation_id = correlation(r.correlation_id);
  row.result = r.result;
  return row;
}

OpRow RecordRows::op(const OpRecord& r) noexcept {
  OpRow row;
  row.kind = r.kind;
  row.start_ns = r.start_ns;
  row.end_ns = r.end_ns;
  row.correlation_id = correlation(r.correlation_id);
  if (r.stream_id != kNoStream) {
    row.stream_id = r.stream_id;
    if (const auto stream = catalog_.stream(r.stream_id)) {
      row.device_id = stream->device;
    } else {
      ++unknown_references_;
    }
  }
  switch (r.kind) {
    case OpKind::Kernel:
    case OpKind::Collective:
    case OpKind::P2P: {
      if (r.detail == kNoShape || r.detail > catalog_.shapeCount()) {
        ++unknown_references_;
        row.name_id = fixedName(kUnknownKernel, "<unknown kernel>");
        break;
      }
      const LaunchShape shape = catalog_.shape(r.detail);
      row.name_id = shape.name_id;
      if (shape.grid.known()) row.grid = shape.grid;
      if (shape.block.known()) row.block = shape.block;
      break;
    }
    case OpKind::Memcpy: {
      const auto kind = static_cast<std::size_t>(r.memcpyKind());
      const std::size_t slot = kind <= static_cast<std::size_t>(MemcpyKind::PeerToPeer) ? kind : 0;
      row.name_id = fixedName(kMemcpyUnknown + slot, kMemcpyNames[slot]);
      row.memcpy_kind = static_cast<MemcpyKind>(slot);
      row.bytes = static_cast<std::int64_t>(r.bytes());
      if (r.bytesClamped()) ++bytes_clamped_;
      break;
    }
    case OpKind::Memset:
      row.name_id = fixedName(kMemset, "Memset");
      row.bytes = static_cast<std::int64_t>(r.bytes());
      if (r.bytesClamped()) ++bytes_clamped_;
      break;
    case OpKind::EventRecord:
      row.name_id = fixedName(kEventRecord, "Event record");
      row.event_id = r.detail;
      break;
    case OpKind::StreamWait:
      row.name_id = fixedName(kStreamWait, "Stream wait event");
      row.event_id = r.detail;
      break;
    case OpKind::HostSync: {
      const auto kind = static_cast<std::size_t>(r.syncKind());
      const std::size_t slot = kind <= static_cast<std::size_t>(SyncKind::Context) ? kind : 0;
      row.name_id = fixedName(kSyncUnknown + slot, kSyncNames[slot]);
      row.sync_kind = static_cast<SyncKind>(slot);
      if (row.sync_kind == SyncKind::Event) row.event_id = r.detail;
      if (row.sync_kind == SyncKind::Device || row.sync_kind == SyncKind::Context) {
        row.device_id = static_cast<std::int32_t>(r.detail);
      }
      break;
    }
  }
  return row;
}

std::optional<CollectiveRow> RecordRows::collective(const CollectiveRecord& r) noexcept {
  const auto comm = catalog_.communicator(r.comm);
  if (!comm) {
    ++unknown_references_;
    return std::nullopt;
  }
  CollectiveRow row;
  row.correlation_id = r.correlation_id;
  row.comm_id = comm->comm_id;
  row.comm_rank = comm->comm_rank;
  row.comm_size = comm->comm_size;
  try {
    if (last_seq_.size() <= r.comm) last_seq_.resize(r.comm + 1, 0);
    const std::uint64_t last = last_seq_[r.comm];
    row.seq = extendSequence(last == 0 ? 0 : last - 1, last != 0, r.seq);
    if (row.seq + 1 > last) last_seq_[r.comm] = row.seq + 1;
  } catch (...) {
    row.seq = r.seq;  // no memory to track wraps: the low bits are still right
  }
  row.coll_type = r.coll_type;
  if (r.dtype != DataType::Unknown) row.dtype = r.dtype;
  if (r.red_op != RedOp::None && r.red_op != RedOp::Unknown) row.red_op = r.red_op;
  row.count = r.count;
  if (const std::uint32_t size = dataTypeSize(r.dtype)) row.bytes = r.count * size;
  if (r.root_or_peer >= 0) row.root_or_peer = r.root_or_peer;
  if (r.group_id != 0) row.group_id = r.group_id;
  return row;
}

NvtxRangeRow RecordRows::nvtx(ThreadId thread, const NvtxRecord& r) noexcept {
  NvtxRangeRow row;
  if (thread != kNoThread) row.thread_id = thread;
  if (r.domain_id != kNoString) row.domain_id = r.domain_id;
  row.name_id = r.name_id;
  row.start_ns = r.start_ns;
  row.end_ns = r.end_ns;
  if (r.depth != NvtxRecord::kNoDepth) row.depth = r.depth;
  if ((r.flags & NvtxRecord::kHasColor) != 0) row.color = r.color;
  return row;
}

AllocationRow RecordRows::allocation(const AllocRecord& r) noexcept {
  AllocationRow row;
  if (r.device >= 0) row.device_id = r.device;
  row.address = r.address;
  row.bytes = r.bytes;
  row.kind = r.kind;
  row.alloc_ns = r.time_ns;
  return row;
}

}  // namespace syncopate::trace::detail
