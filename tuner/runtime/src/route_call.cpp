#include "route_call.hpp"

#include "syncopate/dispatch/kernel_registry.hpp"
#include "syncopate/dispatch/tables.hpp"

namespace syncopate::preload {

using tuner::Call;
using tuner::CallKind;
using tuner::StreamHandle;
using tuner::Touch;

StreamHandle streamOf(const CallFacts& facts) noexcept {
  const cudaStream_t s = facts.stream;
  if (s == nullptr) return facts.per_thread ? reinterpret_cast<StreamHandle>(cudaStreamPerThread) : tuner::kLegacyStream;
  if (s == cudaStreamLegacy) return tuner::kLegacyStream;
  return reinterpret_cast<StreamHandle>(s);
}

Call makeCall(CallKind kind, StreamHandle stream) noexcept {
  Call c;
  c.kind = kind;
  c.stream = stream;
  return c;
}

void describeLaunch(Call& call, const CallFacts& facts, TouchBuffer& buffer) noexcept {
  LaunchTouch found[kMaxLaunchTouches];
  const int count = launchTouches(launchedKernel(facts), facts.kernel_args, facts.kernel_extra, found);
  if (count < 0) {
    call.unknown_pointers = true;  // nothing proves what it touches
    return;
  }
  for (int i = 0; i < count; ++i) buffer.touches[i] = {found[i].address, 0};
  call.touches = std::span<const Touch>(buffer.touches, static_cast<std::size_t>(count));
}

// The device side of a copy or fill: its destination unless the API says it is host memory, and
// its source when it has one there.
void describeRanges(Call& call, const CallFacts& facts, TouchBuffer& buffer) noexcept {
  int n = 0;
  if (facts.dst.side != MemorySide::Host) buffer.touches[n++] = {facts.dst.address, facts.dst.bytes};
  if (facts.what == CallClass::Copy && facts.src.side != MemorySide::Host && facts.src.bytes > 0 &&
      facts.src.address != 0) {
    buffer.touches[n++] = {facts.src.address, facts.src.bytes};
  }
  call.touches = std::span<const Touch>(buffer.touches, static_cast<std::size_t>(n));
  call.synchronous = facts.blocks_host;
}

bool copyIsBarrier(const CallFacts& facts) noexcept {
  return facts.dst.side == MemorySide::Symbol || facts.src.side == MemorySide::Symbol || facts.device_wide ||
         facts.copy_kind == trace::MemcpyKind::PeerToPeer;
}

void describeCollective(Call& call, const CallFacts& facts, PlanRuntime& runtime) noexcept {
  tuner::CollectiveArgs& a = call.collective;
  a.comm = addressOf(facts.comm);
  a.comm_index = runtime.communicatorIndex(facts.comm);
  a.comm_size = runtime.communicatorSize(facts.comm);
  a.type = facts.coll_type;
  a.dtype = facts.dtype;
  a.op = facts.red_op;
  a.root_or_peer = facts.root_or_peer;
  a.count = facts.count;
  a.send = addressOf(facts.send);
  a.recv = addressOf(facts.recv);
}

bool blockingStream(cudaStream_t stream) noexcept {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return true;
  const CudartHelpers* helpers = cudartHelpers();
  unsigned flags = 0;
  if (helpers == nullptr || helpers->cudaStreamGetFlags == nullptr || helpers->cudaStreamGetFlags(stream, &flags) != cudaSuccess) {
    return true;
  }
  return (flags & cudaStreamNonBlocking) == 0;
}

void noteCreatedComms(const CallFacts& facts) noexcept {
  const CommCreation& made = facts.creation;
  // Communicators of several devices in one process (ncclCommInitAll) are not planned for: the
  // runtime follows one device per process, and their collectives pass through as unknown.
  if (made.out == nullptr || *made.out == nullptr || made.count != 1) return;
  if (facts.what == CallClass::CommCreate) {
    if (made.unique_ids == nullptr) return;
    PlanRuntime::instance().communicatorCreated(*made.out, made.rank, made.nranks);
    return;
  }
  int rank = -1, size = 0;
  if (const NcclHelpers* h = ncclHelpers()) {
    if (h->ncclCommUserRank != nullptr) h->ncclCommUserRank(*made.out, &rank);
    if (h->ncclCommCount != nullptr) h->ncclCommCount(*made.out, &size);
  }
  PlanRuntime::instance().communicatorCreated(*made.out, rank, size);
}

}  // namespace syncopate::preload
