// NCCL's profiler plugin interface, version 5 (NCCL >= 2.28; simgpu's NCCL offers the same ABI,
// simgpu/nccl/include/simgpu/nccl/nccl_profiler_v5.h). `syncopate record` points
// NCCL_PROFILER_PLUGIN at this very library, already preloaded, so NCCL's dlopen returns the
// instance that records and its `ncclProfiler_v5` feeds the recorder's own rings.
//
// What is recorded, joined to the interposed call by its correlation id:
//   CollApi/P2pApi  started by NCCL inside the application's ncclAllReduce/ncclSend/... call,
//                   on its thread, while the recording layer has the call's correlation id in
//                   the thread's state: the event's handle carries that id to its children;
//   Coll/P2p        NCCL's function name, seqNumber, algorithm, protocol, channels and warps
//                   (an `nccl_ops` row);
//   KernelCh        the GPU timer at the channel's start and stop (an `nccl_kernel_channels` row).
// Nothing else is asked for (the activation mask); an event of another type, or one whose parent
// is not a handle of ours, gets no handle and is ignored.
//
// Hot path: handles are not pointers but the values themselves (kind, channel, correlation id),
// so no callback allocates, locks or looks anything up beyond interning NCCL's few constant
// names (wait-free once known); records go to the calling thread's ring.
#include <atomic>
#include <cstdint>
#include <string_view>

#include "recorder/nccl_profiler.hpp"
#include "recorder/recorder.hpp"
#include "syncopate/plugin_abi/nccl_profiler_v5.h"

namespace syncopate::preload {
namespace {

constexpr int kActivationMask =
    ncclProfileCollApi | ncclProfileP2pApi | ncclProfileColl | ncclProfileP2p | ncclProfileKernelCh;

enum class HandleKind : std::uint64_t { Call = 1, Operation = 2, KernelChannel = 3 };

void* makeHandle(HandleKind kind, std::uint32_t correlation, std::uint8_t channel = 0) {
  return reinterpret_cast<void*>(static_cast<std::uint64_t>(kind) | (std::uint64_t{channel} << 8) |
                                 (std::uint64_t{correlation} << 32));
}
HandleKind kindOf(const void* handle) {
  return static_cast<HandleKind>(reinterpret_cast<std::uint64_t>(handle) & 0xFF);
}
std::uint32_t correlationOf(const void* handle) {
  return static_cast<std::uint32_t>(reinterpret_cast<std::uint64_t>(handle) >> 32);
}
std::uint8_t channelOf(const void* handle) {
  return static_cast<std::uint8_t>(reinterpret_cast<std::uint64_t>(handle) >> 8);
}

// The correlation id a child event joins through: its parent's handle, when it is ours.
std::uint32_t parentCorrelation(const void* parent, HandleKind expected) {
  return parent != nullptr && kindOf(parent) == expected ? correlationOf(parent) : 0;
}

constinit std::atomic<std::uint64_t> initializedRanks{0};
constinit int contextTag = 0;  // every communicator rank's context: nothing is kept per rank

Recorder* recordingRecorder() {
  Recorder* recorder = Recorder::current();
  return recorder != nullptr && recorder->recording() ? recorder : nullptr;
}

void push(Recorder& recorder, const trace::Record& record) {
  if (ThreadState* thread = recorder.thread()) recorder.push(*thread, std::span<const trace::Record>(&record, 1));
}

trace::StringId internOrNone(Recorder& recorder, const char* text) {
  return text != nullptr ? recorder.internName(std::string_view(text)) : trace::kNoString;
}

void unjoined(Recorder& recorder) {
  recorder.counters().nccl_profiler_events_unjoined.fetch_add(1, std::memory_order_relaxed);
}

ncclResult_t init(void** context, std::uint64_t /*commId*/, int* eActivationMask, const char* /*commName*/,
                  int /*nNodes*/, int /*nranks*/, int /*rank*/, ncclDebugLogger_t /*logfn*/) {
  *context = &contextTag;
  *eActivationMask = kActivationMask;
  initializedRanks.fetch_add(1, std::memory_order_relaxed);
  return ncclSuccess;
}

void* startCall() {
  Recorder* recorder = recordingRecorder();
  if (recorder == nullptr) return nullptr;
  ThreadState* thread = recorder->existingThread();
  const std::uint32_t correlation = thread != nullptr ? thread->nccl_call_correlation : 0;
  return correlation != 0 ? makeHandle(HandleKind::Call, correlation) : nullptr;
}

void* startOperation(const ncclProfilerEventDescr_v5_t& descr) {
  Recorder* recorder = recordingRecorder();
  if (recorder == nullptr) return nullptr;
  const std::uint32_t correlation = parentCorrelation(descr.parentObj, HandleKind::Call);
  if (correlation == 0) {
    unjoined(*recorder);
    return nullptr;
  }
  trace::NcclOpRecord record;
  record.correlation_id = correlation;
  if (descr.type == ncclProfileColl) {
    record.flags = trace::NcclOpRecord::kHasSeq;
    record.nccl_seq = descr.coll.seqNumber;
    record.func_id = internOrNone(*recorder, descr.coll.func);
    record.algorithm_id = internOrNone(*recorder, descr.coll.algo);
    record.protocol_id = internOrNone(*recorder, descr.coll.proto);
    record.channels = descr.coll.nChannels;
    record.warps = descr.coll.nWarps;
  } else {
    record.func_id = internOrNone(*recorder, descr.p2p.func);
    record.channels = descr.p2p.nChannels;
  }
  push(*recorder, record);
  return makeHandle(HandleKind::Operation, correlation);
}

void* startKernelChannel(const ncclProfilerEventDescr_v5_t& descr) {
  Recorder* recorder = recordingRecorder();
  if (recorder == nullptr) return nullptr;
  const std::uint32_t correlation = parentCorrelation(descr.parentObj, HandleKind::Operation);
  if (correlation == 0) {
    unjoined(*recorder);
    return nullptr;
  }
  trace::NcclKernelChannelRecord record;
  record.edge = trace::NcclKernelChannelRecord::kStart;
  record.channel = descr.kernelCh.channelId;
  record.correlation_id = correlation;
  record.timer = descr.kernelCh.pTimer;
  push(*recorder, record);
  return makeHandle(HandleKind::KernelChannel, correlation, descr.kernelCh.channelId);
}

ncclResult_t startEvent(void* /*context*/, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr) {
  *eHandle = nullptr;
  if (eDescr == nullptr) return ncclSuccess;
  switch (eDescr->type) {
    case ncclProfileCollApi:
    case ncclProfileP2pApi: *eHandle = startCall(); break;
    case ncclProfileColl:
    case ncclProfileP2p: *eHandle = startOperation(*eDescr); break;
    case ncclProfileKernelCh: *eHandle = startKernelChannel(*eDescr); break;
    default: break;  // not asked for
  }
  return ncclSuccess;
}

ncclResult_t stopEvent(void* /*eHandle*/) { return ncclSuccess; }

ncclResult_t recordEventState(void* eHandle, ncclProfilerEventState_v5_t eState, ncclProfilerEventStateArgs_v5_t* eStateArgs) {
  if (eHandle == nullptr || kindOf(eHandle) != HandleKind::KernelChannel || eState != ncclProfilerKernelChStop ||
      eStateArgs == nullptr) {
    return ncclSuccess;
  }
  Recorder* recorder = recordingRecorder();
  if (recorder == nullptr) return ncclSuccess;
  trace::NcclKernelChannelRecord record;
  record.edge = trace::NcclKernelChannelRecord::kStop;
  record.channel = channelOf(eHandle);
  record.correlation_id = correlationOf(eHandle);
  record.timer = eStateArgs->kernelCh.pTimer;
  push(*recorder, record);
  return ncclSuccess;
}

ncclResult_t finalize(void* /*context*/) { return ncclSuccess; }

}  // namespace

std::uint64_t ncclProfilerRanks() noexcept { return initializedRanks.load(std::memory_order_relaxed); }

}  // namespace syncopate::preload

// What NCCL looks up in the library NCCL_PROFILER_PLUGIN names (exported by exports.map's nccl*).
extern "C" __attribute__((visibility("default"))) const ncclProfiler_v5_t ncclProfiler_v5 = {
    "syncopate",
    syncopate::preload::init,
    syncopate::preload::startEvent,
    syncopate::preload::stopEvent,
    syncopate::preload::recordEventState,
    syncopate::preload::finalize,
};
