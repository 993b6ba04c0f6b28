#include "route_call.hpp"

#include <bit>
#include <cstring>

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

void describeLaunch(Call& call, const CallFacts& facts, Touch (&touches)[kMaxTouches]) noexcept {
  const KernelInfo* kernel = launchedKernel(facts);
  void** args = facts.kernel_args;
  if (kernel == nullptr || args == nullptr || !kernel->layoutKnown()) {
    call.unknown_pointers = true;
    return;
  }
  std::uint64_t mask = kernel->pointerParameters();
  int n = 0;
  while (mask != 0 && n < kMaxTouches) {
    const int index = std::countr_zero(mask);
    mask &= mask - 1;
    std::uint64_t value = 0;
    std::memcpy(&value, args[index], sizeof value);
    if (value != 0) touches[n++] = {value, 0};
  }
  if (mask != 0) call.unknown_pointers = true;  // more pointers than we follow: cannot prove anything
  call.touches = std::span<const Touch>(touches, static_cast<std::size_t>(n));
}

// The device side of a copy or fill: its destination unless the API says it is host memory, and
// its source when it has one there.
void describeRanges(Call& call, const CallFacts& facts, Touch (&touches)[kMaxTouches]) noexcept {
  int n = 0;
  if (facts.dst.side != MemorySide::Host) touches[n++] = {facts.dst.address, facts.dst.bytes};
  if (facts.what == CallClass::Copy && facts.src.side != MemorySide::Host && facts.src.bytes > 0 &&
      facts.src.address != 0) {
    touches[n++] = {facts.src.address, facts.src.bytes};
  }
  call.touches = std::span<const Touch>(touches, static_cast<std::size_t>(n));
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
