// The recording layer over NCCL: communicator creation (tracked always, see nccl_comms.hpp),
// every collective and send/recv with its communicator, sequence number, operation, type,
// count, root or peer and group, and the GPU time of the work it launched. Inside
// ncclGroupStart/End the work is launched by ncclGroupEnd: the calls' records wait for it, and
// their GPU time is that of the group's launch on their stream.
#include <unistd.h>

#include "common/clock.hpp"
#include "recorder/layers.hpp"
#include "recorder/nccl_comms.hpp"
#include "recorder/op_recording.hpp"

namespace syncopate::preload {
namespace {

constinit const NcclTable* next = nullptr;
constinit std::atomic<std::uint32_t> groups{0};
constinit std::atomic<std::uint64_t> initAllCalls{0};

constexpr trace::ApiDomain kNccl = trace::ApiDomain::Nccl;

trace::DataType dataTypeOf(ncclDataType_t type) {
  auto value = static_cast<int>(type);
  return value >= 0 && value <= static_cast<int>(trace::DataType::Float8e5m2) ? static_cast<trace::DataType>(value)
                                                                            : trace::DataType::Unknown;
}

trace::RedOp redOpOf(ncclRedOp_t op) {
  auto value = static_cast<int>(op);
  return value >= 0 && value <= static_cast<int>(trace::RedOp::Avg) ? static_cast<trace::RedOp>(value)
                                                                   : trace::RedOp::Unknown;  // PreMulSum & co
}

std::uint64_t address(const void* pointer) { return reinterpret_cast<std::uint64_t>(pointer); }

// ---- Communicators --------------------------------------------------------------------------

// Runs a communicator-creating call; on success registers what `describe` says of each new
// communicator, and records the call when recording.
template <class Call, class Register>
ncclResult_t createComm(ApiName api, Call&& call, Register&& registerNew) {
  Recorder* recorder = Recorder::activate();
  std::int64_t start = monotonicNs();
  ThreadState* thread = recorder != nullptr ? recorder->thread() : nullptr;
  if (thread != nullptr) ++thread->nccl_depth;
  ncclResult_t result = call();
  if (thread != nullptr) --thread->nccl_depth;
  std::int64_t end = monotonicNs();
  if (result == ncclSuccess) registerNew(start);
  if (recorder != nullptr && thread != nullptr && recorder->recording()) {
    recordHostCall(*recorder, *thread, kNccl, api, result, start, end);
  }
  return result;
}

void learnRankFrom(std::int32_t rank, std::int32_t size) {
  if (Recorder* recorder = Recorder::current()) recorder->learnRank(rank, size);
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) noexcept {
  return createComm(
      ApiName::ncclCommInitRank, [&] { return next->ncclCommInitRank(comm, nranks, id, rank); },
      [&](std::int64_t start) {
        commRegistry().add(*comm, hashBytes(&id, sizeof id), rank, nranks, 0, start);
        learnRankFrom(rank, nranks);
      });
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t* config) noexcept {
  return createComm(
      ApiName::ncclCommInitRankConfig, [&] { return next->ncclCommInitRankConfig(comm, nranks, id, rank, config); },
      [&](std::int64_t start) {
        commRegistry().add(*comm, hashBytes(&id, sizeof id), rank, nranks, 0, start);
        learnRankFrom(rank, nranks);
      });
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t* comm, int nranks, int rank, int nId, ncclUniqueId* ids,
                                      ncclConfig_t* config) noexcept {
  return createComm(
      ApiName::ncclCommInitRankScalable, [&] { return next->ncclCommInitRankScalable(comm, nranks, rank, nId, ids, config); },
      [&](std::int64_t start) {
        std::uint64_t hash = nId > 0 && ids != nullptr ? hashBytes(ids, sizeof(ncclUniqueId) * static_cast<std::size_t>(nId)) : 0;
        commRegistry().add(*comm, hash, rank, nranks, 0, start);
        learnRankFrom(rank, nranks);
      });
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) noexcept {
  return createComm(
      ApiName::ncclCommInitAll, [&] { return next->ncclCommInitAll(comms, ndev, devlist); },
      [&](std::int64_t start) {
        // Every rank lives in this process: an id unique to this call is identical on all.
        char host[256] = {};
        gethostname(host, sizeof host - 1);
        std::uint64_t id = combineHash(hashBytes(host, sizeof host, static_cast<std::uint64_t>(getpid())),
                                       initAllCalls.fetch_add(1, std::memory_order_relaxed));
        for (int rank = 0; rank < ndev; ++rank) commRegistry().add(comms[rank], id, rank, ndev, 0, start);
      });
}

// A communicator made from a parent: its id follows from the parent's and the order of the
// parent's children, which is the same on every rank of the parent.
void registerChild(ncclComm_t parent, ncclComm_t* child, std::uint64_t salt, std::int64_t start) {
  CommState* parent_state = commRegistry().find(parent);
  std::uint64_t parent_id = parent_state != nullptr ? parent_state->comm_id : 0;
  std::uint32_t order = parent_state != nullptr ? parent_state->children.fetch_add(1, std::memory_order_relaxed) : 0;
  if (child == nullptr || *child == nullptr) return;  // NCCL_SPLIT_NOCOLOR: no communicator
  int rank = 0;
  int size = 0;
  if (const NcclHelpers* helpers = ncclHelpers()) {
    if (helpers->ncclCommUserRank != nullptr) helpers->ncclCommUserRank(*child, &rank);
    if (helpers->ncclCommCount != nullptr) helpers->ncclCommCount(*child, &size);
  }
  commRegistry().add(*child, combineHash(combineHash(parent_id, order), salt), rank, size, parent_id, start);
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) noexcept {
  return createComm(
      ApiName::ncclCommSplit, [&] { return next->ncclCommSplit(comm, color, key, newcomm, config); },
      [&](std::int64_t start) { registerChild(comm, newcomm, static_cast<std::uint64_t>(static_cast<std::uint32_t>(color)), start); });
}

ncclResult_t ncclCommShrink(ncclComm_t comm, int* exclude, int excludeCount, ncclComm_t* newcomm, ncclConfig_t* config,
                            int flags) noexcept {
  return createComm(
      ApiName::ncclCommShrink, [&] { return next->ncclCommShrink(comm, exclude, excludeCount, newcomm, config, flags); },
      [&](std::int64_t start) { registerChild(comm, newcomm, 0x5348524e4bull /* "SHRNK" */, start); });
}

template <class Call>
ncclResult_t endComm(ApiName api, ncclComm_t comm, bool removes, Call&& call) {
  Recorder* recorder = Recorder::activate();
  std::int64_t start = monotonicNs();
  ThreadState* thread = recorder != nullptr ? recorder->thread() : nullptr;
  if (thread != nullptr) ++thread->nccl_depth;
  ncclResult_t result = call();
  if (thread != nullptr) --thread->nccl_depth;
  if (removes) commRegistry().remove(comm);
  if (recorder != nullptr && thread != nullptr && recorder->recording()) {
    recordHostCall(*recorder, *thread, kNccl, api, result, start, monotonicNs());
  }
  return result;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) noexcept {
  return endComm(ApiName::ncclCommFinalize, comm, false, [&] { return next->ncclCommFinalize(comm); });
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) noexcept {
  return endComm(ApiName::ncclCommDestroy, comm, true, [&] { return next->ncclCommDestroy(comm); });
}
ncclResult_t ncclCommAbort(ncclComm_t comm) noexcept {
  return endComm(ApiName::ncclCommAbort, comm, true, [&] { return next->ncclCommAbort(comm); });
}

// ---- Collectives and send/recv --------------------------------------------------------------

struct Collective {
  trace::CollType type;
  const void* send;
  const void* recv;
  std::size_t count;
  ncclDataType_t dtype;
  trace::RedOp red_op;
  std::int32_t root_or_peer;  // -1: none
};

template <class Call>
ncclResult_t collective(ApiName api, const Collective& c, ncclComm_t comm, cudaStream_t stream, Call&& call) {
  CommState* state = commRegistry().find(comm);
  // Counted on every call, recorded or not: the numbers must agree across ranks.
  const std::uint64_t seq = state != nullptr ? state->next_seq.fetch_add(1, std::memory_order_relaxed) : 0;
  Recorder* recorder = Recorder::activate();
  ThreadState* thread = recorder != nullptr ? recorder->thread() : nullptr;
  if (thread == nullptr || !recorder->recording() || thread->nccl_depth > 0) {
    if (thread != nullptr) ++thread->nccl_depth;
    ncclResult_t result = call();
    if (thread != nullptr) --thread->nccl_depth;
    return result;
  }

  const std::int64_t start = monotonicNs();
  const std::uint32_t correlation = recorder->nextCorrelation(*thread);
  const int device = state != nullptr && state->device >= 0 ? state->device : recorder->currentDevice(*thread);
  const bool grouped = thread->group_depth > 0;
  const bool captured = recorder->capturing(stream);
  TimingBackend& timing = recorder->timing();
  const Ticket ticket = grouped || captured ? kNoTicket : timing.begin(device, stream, correlation);
  ++thread->nccl_depth;
  thread->nccl_call_correlation = captured ? 0 : correlation;  // a captured call gets no rows to join
  const ncclResult_t result = call();
  thread->nccl_call_correlation = 0;
  --thread->nccl_depth;
  const bool issued = result == ncclSuccess || result == ncclInProgress;
  const bool timed = ticket != kNoTicket && timing.end(ticket, stream, issued);
  const std::int64_t end = monotonicNs();

  trace::ApiCallRecord call_record;
  call_record.domain = kNccl;
  call_record.name_id = recorder->apiName(api);
  call_record.correlation_id = issued && !captured ? correlation : 0;
  call_record.result = static_cast<std::int32_t>(result);
  call_record.start_ns = start;
  call_record.end_ns = end;
  if (!issued || captured) {
    if (issued) recorder->counters().ops_captured_into_graphs.fetch_add(1, std::memory_order_relaxed);
    trace::Record record = call_record;
    recorder->push(*thread, std::span<const trace::Record>(&record, 1));
    return result;
  }

  trace::CollectiveRecord details;
  details.coll_type = c.type;
  details.dtype = dataTypeOf(c.dtype);
  details.red_op = c.red_op;
  details.correlation_id = correlation;
  details.comm = state != nullptr ? commRegistry().catalogId(*recorder, *state) : trace::kNoComm;
  details.root_or_peer = c.root_or_peer;
  details.seq = static_cast<std::uint32_t>(seq);
  details.group_id = grouped ? thread->group_id : 0;
  details.count = c.count;
  trace::OpArgsRecord buffers;
  buffers.correlation_id = correlation;
  buffers.count = 2;
  buffers.index[0] = 0;
  buffers.index[1] = 1;
  buffers.address[0] = address(c.send);
  buffers.address[1] = address(c.recv);
  trace::LaunchShape shape;
  shape.name_id = recorder->apiName(api);
  const trace::OpKind kind =
      c.type == trace::CollType::Send || c.type == trace::CollType::Recv ? trace::OpKind::P2P : trace::OpKind::Collective;
  trace::OpRecord pending = trace::OpRecord::launch(kind, recorder->streamId(*thread, device, stream), correlation,
                                                    recorder->catalog().internShape(shape), 0, 0);

  if (grouped) {
    // Waits for ncclGroupEnd, which launches the work.
    if (thread->group_count < kMaxGroupOps) {
      thread->group_ops[thread->group_count++] = {details, buffers, pending, stream, device};
    } else {
      recorder->counters().nccl_group_ops_overflow.fetch_add(1, std::memory_order_relaxed);
    }
    trace::Record record = call_record;
    recorder->push(*thread, std::span<const trace::Record>(&record, 1));
    return result;
  }
  trace::Record records[4] = {call_record, details, buffers, {}};
  std::size_t count = 3;
  if (timed) {
    pending.end_ns = static_cast<std::int64_t>(ticket);
    records[count++] = pending;
  } else {
    recorder->counters().ops_untimed_no_timing_slot.fetch_add(1, std::memory_order_relaxed);
  }
  recorder->push(*thread, std::span<const trace::Record>(records, count));
  return result;
}

Collective reduction(trace::CollType type, const void* send, void* recv, size_t count, ncclDataType_t dtype,
                     ncclRedOp_t op, int root) {
  return {type, send, recv, count, dtype, redOpOf(op), root};
}
Collective movement(trace::CollType type, const void* send, const void* recv, size_t count, ncclDataType_t dtype, int root) {
  return {type, send, recv, count, dtype, trace::RedOp::None, root};
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t dtype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) noexcept {
  return collective(ApiName::ncclAllReduce, reduction(trace::CollType::AllReduce, send, recv, count, dtype, op, -1), comm,
                    stream, [&] { return next->ncclAllReduce(send, recv, count, dtype, op, comm, stream); });
}
ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t dtype, ncclRedOp_t op, int root,
                        ncclComm_t comm, cudaStream_t stream) noexcept {
  return collective(ApiName::ncclReduce, reduction(trace::CollType::Reduce, send, recv, count, dtype, op, root), comm, stream,
                    [&] { return next->ncclReduce(send, recv, count, dtype, op, root, comm, stream); });
}
ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t recvcount, ncclDataType_t dtype, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream) noexcept {
  return collective(ApiName::ncclReduceScatter, reduction(trace::CollType::ReduceScatter, send, recv, recvcount, dtype, op, -1),
                    comm, stream, [&] { return next->ncclReduceScatter(send, recv, recvcount, dtype, op, comm, stream); });
}
ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t dtype, int root, ncclComm_t comm,
                           cudaStream_t stream) noexcept {
  return collective(ApiName::ncclBroadcast, movement(trace::CollType::Broadcast, send, recv, count, dtype, root), comm, stream,
                    [&] { return next->ncclBroadcast(send, recv, count, dtype, root, comm, stream); });
}
ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t dtype, int root, ncclComm_t comm, cudaStream_t stream) noexcept {
  return collective(ApiName::ncclBcast, movement(trace::CollType::Broadcast, buff, buff, count, dtype, root), comm, stream,
                    [&] { return next->ncclBcast(buff, count, dtype, root, comm, stream); });
}
ncclResult_t ncclAllGather(const void* send, void* recv, size_t sendcount, ncclDataType_t dtype, ncclComm_t comm,
                           cudaStream_t stream) noexcept {
  return collective(ApiName::ncclAllGather, movement(trace::CollType::AllGather, send, recv, sendcount, dtype, -1), comm,
                    stream, [&] { return next->ncclAllGather(send, recv, sendcount, dtype, comm, stream); });
}
ncclResult_t ncclAlltoAll(const void* send, void* recv, size_t count, ncclDataType_t dtype, ncclComm_t comm,
                          cudaStream_t stream) noexcept {
  return collective(ApiName::ncclAlltoAll, movement(trace::CollType::AllToAll, send, recv, count, dtype, -1), comm, stream,
                    [&] { return next->ncclAlltoAll(send, recv, count, dtype, comm, stream); });
}
ncclResult_t ncclGather(const void* send, void* recv, size_t count, ncclDataType_t dtype, int root, ncclComm_t comm,
                        cudaStream_t stream) noexcept {
  return collective(ApiName::ncclGather, movement(trace::CollType::Gather, send, recv, count, dtype, root), comm, stream,
                    [&] { return next->ncclGather(send, recv, count, dtype, root, comm, stream); });
}
ncclResult_t ncclScatter(const void* send, void* recv, size_t count, ncclDataType_t dtype, int root, ncclComm_t comm,
                         cudaStream_t stream) noexcept {
  return collective(ApiName::ncclScatter, movement(trace::CollType::Scatter, send, recv, count, dtype, root), comm, stream,
                    [&] { return next->ncclScatter(send, recv, count, dtype, root, comm, stream); });
}
ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t dtype, int peer, ncclComm_t comm, cudaStream_t stream) noexcept {
  return collective(ApiName::ncclSend, movement(trace::CollType::Send, send, nullptr, count, dtype, peer), comm, stream,
                    [&] { return next->ncclSend(send, count, dtype, peer, comm, stream); });
}
ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t dtype, int peer, ncclComm_t comm, cudaStream_t stream) noexcept {
  return collective(ApiName::ncclRecv, movement(trace::CollType::Recv, nullptr, recv, count, dtype, peer), comm, stream,
                    [&] { return next->ncclRecv(recv, count, dtype, peer, comm, stream); });
}

// ---- Groups ---------------------------------------------------------------------------------

ncclResult_t ncclGroupStart() noexcept {
  Recorder* recorder = Recorder::activate();
  ThreadState* thread = recorder != nullptr ? recorder->thread() : nullptr;
  if (thread == nullptr) return next->ncclGroupStart();
  std::int64_t start = monotonicNs();
  ncclResult_t result = next->ncclGroupStart();
  if (result == ncclSuccess && thread->group_depth++ == 0) {
    thread->group_id = groups.fetch_add(1, std::memory_order_relaxed) + 1;
    thread->group_count = 0;
  }
  if (recorder->recording() && thread->nccl_depth == 0) {
    recordHostCall(*recorder, *thread, kNccl, ApiName::ncclGroupStart, result, start, monotonicNs());
  }
  return result;
}

// The group's GPU work is launched here: one timing bracket per stream the group's calls use,
// shared by those calls.
ncclResult_t ncclGroupEnd() noexcept {
  Recorder* recorder = Recorder::activate();
  ThreadState* thread = recorder != nullptr ? recorder->thread() : nullptr;
  if (thread == nullptr || thread->group_depth == 0) return next->ncclGroupEnd();
  if (--thread->group_depth > 0 || thread->group_count == 0 || !recorder->recording()) {
    std::int64_t start = monotonicNs();
    ncclResult_t result = next->ncclGroupEnd();
    if (thread->group_depth == 0) thread->group_count = 0;
    if (recorder->recording() && thread->nccl_depth == 0) {
      recordHostCall(*recorder, *thread, kNccl, ApiName::ncclGroupEnd, result, start, monotonicNs());
    }
    return result;
  }

  struct Bracket {
    cudaStream_t stream;
    Ticket ticket;
  };
  constexpr int kMaxBrackets = 32;
  Bracket brackets[kMaxBrackets];
  int bracket_count = 0;
  Ticket op_ticket[kMaxGroupOps];
  const int count = thread->group_count;
  thread->group_count = 0;
  TimingBackend& timing = recorder->timing();
  const std::uint32_t correlation = recorder->nextCorrelation(*thread);
  const std::int64_t start = monotonicNs();
  for (int i = 0; i < count; ++i) {
    const GroupedOp& op = thread->group_ops[i];
    int found = 0;
    while (found < bracket_count && brackets[found].stream != op.stream) ++found;
    if (found == bracket_count && bracket_count < kMaxBrackets) {
      Ticket ticket = recorder->capturing(op.stream) ? kNoTicket : timing.begin(op.device, op.stream, correlation);
      brackets[bracket_count++] = {op.stream, ticket};
    }
    op_ticket[i] = found < bracket_count ? brackets[found].ticket : kNoTicket;
  }
  ++thread->nccl_depth;
  const ncclResult_t result = next->ncclGroupEnd();
  --thread->nccl_depth;
  const bool issued = result == ncclSuccess || result == ncclInProgress;
  for (int b = 0; b < bracket_count; ++b) {
    if (brackets[b].ticket == kNoTicket) continue;
    Ticket ticket = brackets[b].ticket;
    bool timed = timing.end(ticket, brackets[b].stream, issued);
    for (int i = 0; i < count; ++i) {
      if (op_ticket[i] == ticket && !timed) op_ticket[i] = kNoTicket;
    }
  }
  // One reference per op on each distinct ticket (a backend may hand one ticket to all streams).
  for (int b = 0; b < bracket_count; ++b) {
    Ticket ticket = brackets[b].ticket;
    if (ticket == kNoTicket) continue;
    bool seen_before = false;
    for (int earlier = 0; earlier < b; ++earlier) seen_before |= brackets[earlier].ticket == ticket;
    if (seen_before) continue;
    int users = 0;
    for (int i = 0; i < count; ++i) users += op_ticket[i] == ticket ? 1 : 0;
    if (users > 1) timing.share(ticket, users - 1);
  }

  trace::ApiCallRecord call_record;
  call_record.domain = kNccl;
  call_record.name_id = recorder->apiName(ApiName::ncclGroupEnd);
  call_record.result = static_cast<std::int32_t>(result);
  call_record.start_ns = start;
  call_record.end_ns = monotonicNs();
  trace::Record record = call_record;
  recorder->push(*thread, std::span<const trace::Record>(&record, 1));
  if (!issued) return result;
  for (int i = 0; i < count; ++i) {
    const GroupedOp& op = thread->group_ops[i];
    trace::Record records[3] = {op.collective, op.buffers, {}};
    std::size_t n = 2;
    if (op_ticket[i] != kNoTicket) {
      trace::OpRecord pending = op.pending;
      pending.end_ns = static_cast<std::int64_t>(op_ticket[i]);
      records[n++] = pending;
    } else if (recorder->capturing(op.stream)) {
      recorder->counters().ops_captured_into_graphs.fetch_add(1, std::memory_order_relaxed);
      continue;  // captured into a graph: no op, so no collective row either
    } else {
      recorder->counters().ops_untimed_no_timing_slot.fetch_add(1, std::memory_order_relaxed);
    }
    recorder->push(*thread, std::span<const trace::Record>(records, n));
  }
  return result;
}

}  // namespace

void wrapNcclForRecording(NcclTable& table, const NcclTable& below) noexcept {
  next = &below;
  table.ncclCommInitRank = ncclCommInitRank;
  table.ncclCommInitRankConfig = ncclCommInitRankConfig;
  table.ncclCommInitRankScalable = ncclCommInitRankScalable;
  table.ncclCommInitAll = ncclCommInitAll;
  table.ncclCommSplit = ncclCommSplit;
  table.ncclCommShrink = ncclCommShrink;
  table.ncclCommFinalize = ncclCommFinalize;
  table.ncclCommDestroy = ncclCommDestroy;
  table.ncclCommAbort = ncclCommAbort;
  table.ncclAllReduce = ncclAllReduce;
  table.ncclBroadcast = ncclBroadcast;
  table.ncclBcast = ncclBcast;
  table.ncclReduce = ncclReduce;
  table.ncclAllGather = ncclAllGather;
  table.ncclReduceScatter = ncclReduceScatter;
  table.ncclAlltoAll = ncclAlltoAll;
  table.ncclGather = ncclGather;
  table.ncclScatter = ncclScatter;
  table.ncclSend = ncclSend;
  table.ncclRecv = ncclRecv;
  table.ncclGroupStart = ncclGroupStart;
  table.ncclGroupEnd = ncclGroupEnd;
}

}  // namespace syncopate::preload
