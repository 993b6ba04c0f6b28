#include "syncopate/tuner/calls.hpp"

#include "syncopate/tuner/executor.hpp"

namespace syncopate::tuner {

namespace {
// Elements each rank contributes (send) and receives, by collective type.
std::uint64_t perRank(const CollectiveArgs& a) { return a.count * trace::dataTypeSize(a.dtype); }
std::uint64_t ranks(const CollectiveArgs& a) { return a.comm_size > 0 ? static_cast<std::uint64_t>(a.comm_size) : 1; }
}  // namespace

// NCCL's conventions: `count` is what one rank contributes to or receives from one peer, so
// the buffer that holds every rank's part spans count * ranks elements.
std::uint64_t CollectiveArgs::send_bytes() const {
  switch (type) {
    case trace::CollType::ReduceScatter:
    case trace::CollType::AllToAll:
    case trace::CollType::Scatter: return perRank(*this) * ranks(*this);
    case trace::CollType::Recv: return 0;
    default: return perRank(*this);
  }
}

std::uint64_t CollectiveArgs::recv_bytes() const {
  switch (type) {
    case trace::CollType::AllGather:
    case trace::CollType::AllToAll:
    case trace::CollType::Gather: return perRank(*this) * ranks(*this);
    case trace::CollType::Send: return 0;
    default: return perRank(*this);
  }
}

std::string_view toString(CallKind kind) {
  switch (kind) {
    case CallKind::Kernel: return "kernel";
    case CallKind::Memcpy: return "memcpy";
    case CallKind::Memset: return "memset";
    case CallKind::Collective: return "collective";
    case CallKind::EventRecord: return "event record";
    case CallKind::StreamWait: return "stream wait";
    case CallKind::StreamSync: return "stream sync";
    case CallKind::EventSync: return "event sync";
    case CallKind::DeviceSync: return "device sync";
    case CallKind::StreamQuery: return "stream query";
    case CallKind::Barrier: return "unknown call";
    case CallKind::CaptureBegin: return "graph capture begin";
    case CallKind::CaptureEnd: return "graph capture end";
    case CallKind::GroupBegin: return "NCCL group start";
    case CallKind::GroupEnd: return "NCCL group end";
    case CallKind::CommEnd: return "communicator end";
    case CallKind::EventQuery: return "event query";
  }
  return "?";
}

std::string_view toString(Fallback f) {
  switch (f) {
    case Fallback::UnknownParameterLayout: return "unknown_parameter_layout";
    case Fallback::UnknownApi: return "unknown_api";
    case Fallback::GraphCapture: return "graph_capture";
    case Fallback::LegacyStream: return "legacy_stream";
    case Fallback::OverlappingBuffer: return "overlapping_buffer";
    case Fallback::RanksDisagree: return "ranks_disagree";
    case Fallback::UnplannedGroup: return "unplanned_group";
    case Fallback::CapacityExceeded: return "capacity_exceeded";
    case Fallback::NcclGroup: return "nccl_group";
    case Fallback::MultipleDevices: return "multiple_devices";
    case Fallback::PlanUnusable: return "plan_unusable";
  }
  return "?";
}

std::string_view describe(Fallback f) {
  switch (f) {
    case Fallback::UnknownParameterLayout:
      return "a kernel whose pointer parameters are not known: everything in flight is waited for and the "
             "original order kept around it";
    case Fallback::UnknownApi:
      return "a call whose effect on memory cannot be proven: everything in flight is waited for and the original "
             "order kept around it";
    case Fallback::GraphCapture:
      return "work captured into a CUDA graph is not reordered: the plan resumes after the capture ends";
    case Fallback::LegacyStream:
      return "an op on the legacy default stream synchronises every stream: everything in flight is waited for";
    case Fallback::OverlappingBuffer:
      return "a collective's send and receive buffers partly overlap (neither holds the other), so dependencies "
             "cannot be proven: the plan is disabled and the original order kept from here on";
    case Fallback::RanksDisagree:
      return "ranks reached a flush with different groups of collectives (their call sequences differ): every "
             "rank disabled the plan and keeps the original order from here on";
    case Fallback::UnplannedGroup:
      return "a group of collectives the plan does not know was issued in its original order";
    case Fallback::CapacityExceeded:
      return "more streams, events or buffers than the runtime tracks: the plan is disabled and the original "
             "order kept from here on";
    case Fallback::NcclGroup:
      return "collectives inside ncclGroupStart/ncclGroupEnd keep their original order";
    case Fallback::MultipleDevices:
      return "the process uses more than one device, which the runtime does not reorder: the plan is disabled and "
             "the original order kept from here on";
    case Fallback::PlanUnusable:
      return "the plan could not be read or cannot be applied by the runtime: the job runs unchanged";
  }
  return "?";
}

}  // namespace syncopate::tuner
