#include "recorder/nccl_calls.hpp"

#include <unistd.h>

#include "syncopate/dispatch/chain.hpp"
#include "syncopate/dispatch/tables.hpp"

namespace syncopate::preload {
namespace {

constinit std::atomic<std::uint32_t> groups{0};
constinit std::atomic<std::uint64_t> initAllCalls{0};

void learnRankFrom(std::int32_t rank, std::int32_t size) {
  if (Recorder* recorder = Recorder::current()) recorder->learnRank(rank, size);
}

// Registers what `made` describes once its handles are there: at once, or, for a call made
// inside a group, at the group's end (NCCL initialises such communicators in ncclGroupEnd, and
// writes a split's handle only then).
void place(const PendingComms& made, ThreadState* thread) {
  if (thread != nullptr && thread->group_depth > 0) {
    try {
      thread->group_comms.push_back(made);
      return;
    } catch (...) {
      // Out of memory: registered now, with whatever handles there already are.
    }
  }
  for (int i = 0; i < made.count; ++i) {
    if (made.out[i] == nullptr) continue;  // NCCL_SPLIT_NOCOLOR, or a failed creation
    const std::int32_t rank = made.count > 1 ? i : made.rank;
    commRegistry().add(made.out[i], made.comm_id, rank, made.size, made.parent_comm_id, made.start);
  }
}

}  // namespace

void registerCreatedComms(const CallFacts& facts, ThreadState* thread, std::int64_t start) noexcept {
  const CommCreation& made = facts.creation;
  if (made.out == nullptr) return;
  PendingComms pending;
  pending.out = made.out;
  pending.start = start;
  if (facts.what == CallClass::CommDerive) {
    // Its id follows from the parent's and the order of the parent's children, which is the
    // same on every rank of the parent; its rank and size are NCCL's to say once it is ready.
    CommState* parent = commRegistry().find(made.parent);
    pending.parent_comm_id = parent != nullptr ? parent->comm_id : 0;
    const std::uint32_t order = parent != nullptr ? parent->children.fetch_add(1, std::memory_order_relaxed) : 0;
    pending.comm_id = combineHash(combineHash(pending.parent_comm_id, order), made.derive_salt);
  } else if (made.unique_ids == nullptr) {
    // ncclCommInitAll: every rank lives in this process, so an id unique to this call is
    // identical on all; rank i is out[i].
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    pending.comm_id = combineHash(hashBytes(host, sizeof host, static_cast<std::uint64_t>(getpid())),
                                  initAllCalls.fetch_add(1, std::memory_order_relaxed));
    pending.count = made.count;
    pending.size = made.count;
  } else {
    pending.comm_id =
        made.unique_id_count > 0
            ? hashBytes(made.unique_ids, sizeof(ncclUniqueId) * static_cast<std::size_t>(made.unique_id_count))
            : 0;
    pending.rank = made.rank;
    pending.size = made.nranks;
    learnRankFrom(made.rank, made.nranks);
  }
  place(pending, thread);
}

void registerGroupComms(ThreadState& thread, ncclResult_t result) noexcept {
  if (ncclIssued(result)) {
    for (const PendingComms& made : thread.group_comms) place(made, nullptr);
  }
  thread.group_comms.clear();
}

namespace {

// NCCL drops an empty collective before it reaches a stream (as simgpu's does); a send or
// receive of 0 bytes still matches its peer's, and launches.
bool launchesWork(const CallFacts& facts) noexcept {
  return facts.count > 0 || facts.coll_type == trace::CollType::Send || facts.coll_type == trace::CollType::Recv;
}

// The device a collective's work goes to: its communicator's, else its stream's (a thread may
// issue collectives for several devices in one group without switching devices).
int collectiveDevice(Recorder& recorder, ThreadState& thread, CommState* comm, cudaStream_t stream) noexcept {
  if (comm != nullptr) {
    commRegistry().describe(*comm);
    if (const std::int32_t device = comm->device.load(std::memory_order_relaxed); device >= 0) [[likely]] return device;
  }
  const CudartHelpers* helpers = cudartHelpers();
  int device = -1;
  if (helpers != nullptr && helpers->cudaStreamGetDevice != nullptr && helpers->cudaStreamGetDevice(stream, &device) == cudaSuccess) {
    return device;
  }
  return recorder.currentDevice(thread);
}

}  // namespace

bool beginCollective(const CallFacts& facts, CollectiveIssue& issue) noexcept {
  issue.comm = commRegistry().find(facts.comm);
  issue.seq = issue.comm != nullptr ? issue.comm->next_seq.fetch_add(1, std::memory_order_relaxed) : 0;
  Recorder* recorder = Recorder::activate();
  issue.thread = recorder != nullptr ? recorder->thread() : nullptr;
  if (issue.thread == nullptr || !recorder->recording() || issue.thread->nccl_depth > 0) return false;
  ThreadState& thread = *issue.thread;
  issue.recorder = recorder;
  issue.start = monotonicNs();
  issue.correlation = recorder->nextCorrelation(thread);
  issue.device = collectiveDevice(*recorder, thread, issue.comm, facts.stream);
  issue.grouped = thread.group_depth > 0;
  issue.captured = recorder->capturing(facts.stream);
  if (!issue.grouped && !issue.captured) {
    issue.ticket = launchesWork(facts) ? recorder->timing().begin(issue.device, facts.stream, issue.correlation)
                                       : kStreamOrderTicket;
  }
  return true;
}

void endCollective(const CallFacts& facts, CollectiveIssue& issue, ncclResult_t result) noexcept {
  Recorder& recorder = *issue.recorder;
  ThreadState& thread = *issue.thread;
  const bool issued = ncclIssued(result);
  const bool timed = issue.ticket == kStreamOrderTicket ||
                     (issue.ticket != kNoTicket && recorder.timing().end(issue.ticket, facts.stream, issued));
  const std::int64_t end = monotonicNs();

  trace::ApiCallRecord call_record;
  call_record.domain = facts.domain;
  call_record.name_id = recorder.apiName(facts.api);
  call_record.correlation_id = issued && !issue.captured ? issue.correlation : 0;
  call_record.result = static_cast<std::int32_t>(result);
  call_record.start_ns = issue.start;
  call_record.end_ns = end;
  if (!issued || issue.captured) {
    if (issued) recorder.counters().ops_captured_into_graphs.fetch_add(1, std::memory_order_relaxed);
    trace::Record record = call_record;
    recorder.push(thread, std::span<const trace::Record>(&record, 1));
    return;
  }

  trace::CollectiveRecord details;
  details.coll_type = facts.coll_type;
  details.dtype = facts.dtype;
  details.red_op = facts.red_op;
  details.correlation_id = issue.correlation;
  details.comm = issue.comm != nullptr ? commRegistry().catalogId(recorder, *issue.comm) : trace::kNoComm;
  details.root_or_peer = facts.root_or_peer;
  details.seq = static_cast<std::uint32_t>(issue.seq);
  details.group_id = issue.grouped ? thread.group_id : 0;
  details.count = facts.count;
  trace::OpArgsRecord buffers;
  buffers.correlation_id = issue.correlation;
  buffers.count = 2;
  buffers.index[0] = 0;
  buffers.index[1] = 1;
  buffers.address[0] = addressOf(facts.send);
  buffers.address[1] = addressOf(facts.recv);
  trace::LaunchShape shape;
  shape.name_id = recorder.apiName(facts.api);
  const trace::OpKind kind = facts.coll_type == trace::CollType::Send || facts.coll_type == trace::CollType::Recv
                                 ? trace::OpKind::P2P
                                 : trace::OpKind::Collective;
  trace::OpRecord pending = trace::OpRecord::launch(kind, recorder.streamId(thread, issue.device, facts.stream),
                                                    issue.correlation, recorder.catalog().internShape(shape), 0, 0);

  if (issue.grouped) {
    // Waits for ncclGroupEnd, which launches the work.
    if (thread.group_count < kMaxGroupOps) {
      thread.group_ops[thread.group_count++] = {details, buffers, pending, facts.stream, issue.device, launchesWork(facts)};
    } else {
      recorder.counters().nccl_group_ops_overflow.fetch_add(1, std::memory_order_relaxed);
    }
    trace::Record record = call_record;
    recorder.push(thread, std::span<const trace::Record>(&record, 1));
    return;
  }
  trace::Record records[4] = {call_record, details, buffers, {}};
  std::size_t count = 3;
  if (timed) {
    pending.end_ns = static_cast<std::int64_t>(issue.ticket);
    records[count++] = pending;
  } else {
    recorder.counters().ops_untimed_no_timing_slot.fetch_add(1, std::memory_order_relaxed);
  }
  recorder.push(thread, std::span<const trace::Record>(records, count));
}

void groupStarted(ThreadState& thread, ncclResult_t result) noexcept {
  if (result == ncclSuccess && thread.group_depth++ == 0) {
    thread.group_id = groups.fetch_add(1, std::memory_order_relaxed) + 1;
    thread.group_count = 0;
  }
}

void beginGroupLaunch(Recorder& recorder, ThreadState& thread, GroupLaunch& launch) noexcept {
  launch.count = thread.group_count;
  thread.group_count = 0;
  TimingBackend& timing = recorder.timing();
  launch.correlation = recorder.nextCorrelation(thread);
  launch.start = monotonicNs();
  for (int i = 0; i < launch.count; ++i) {
    const GroupedOp& op = thread.group_ops[i];
    if (!op.gpu_work) {
      launch.op_ticket[i] = recorder.capturing(op.stream) ? kNoTicket : kStreamOrderTicket;
      continue;
    }
    int found = 0;
    while (found < launch.bracket_count && launch.brackets[found].stream != op.stream) ++found;
    if (found == launch.bracket_count && launch.bracket_count < GroupLaunch::kMaxBrackets) {
      const Ticket ticket =
          recorder.capturing(op.stream) ? kNoTicket : timing.begin(op.device, op.stream, launch.correlation);
      launch.brackets[launch.bracket_count++] = {op.stream, ticket};
    }
    launch.op_ticket[i] = found < launch.bracket_count ? launch.brackets[found].ticket : kNoTicket;
  }
}

void endGroupLaunch(Recorder& recorder, ThreadState& thread, const CallFacts& facts, GroupLaunch& launch,
                    ncclResult_t result) noexcept {
  TimingBackend& timing = recorder.timing();
  const bool issued = ncclIssued(result);
  for (int b = 0; b < launch.bracket_count; ++b) {
    if (launch.brackets[b].ticket == kNoTicket) continue;
    const Ticket ticket = launch.brackets[b].ticket;
    const bool timed = timing.end(ticket, launch.brackets[b].stream, issued);
    for (int i = 0; i < launch.count; ++i) {
      if (launch.op_ticket[i] == ticket && !timed) launch.op_ticket[i] = kNoTicket;
    }
  }
  // One reference per op on each distinct ticket (a backend may hand one ticket to all streams).
  for (int b = 0; b < launch.bracket_count; ++b) {
    const Ticket ticket = launch.brackets[b].ticket;
    if (ticket == kNoTicket) continue;
    bool seen_before = false;
    for (int earlier = 0; earlier < b; ++earlier) seen_before |= launch.brackets[earlier].ticket == ticket;
    if (seen_before) continue;
    int users = 0;
    for (int i = 0; i < launch.count; ++i) users += launch.op_ticket[i] == ticket ? 1 : 0;
    if (users > 1) timing.share(ticket, users - 1);
  }

  trace::ApiCallRecord call_record;
  call_record.domain = facts.domain;
  call_record.name_id = recorder.apiName(facts.api);
  call_record.result = static_cast<std::int32_t>(result);
  call_record.start_ns = launch.start;
  call_record.end_ns = monotonicNs();
  trace::Record record = call_record;
  recorder.push(thread, std::span<const trace::Record>(&record, 1));
  if (!issued) return;
  for (int i = 0; i < launch.count; ++i) {
    const GroupedOp& op = thread.group_ops[i];
    trace::Record records[3] = {op.collective, op.buffers, {}};
    std::size_t n = 2;
    if (launch.op_ticket[i] != kNoTicket) {
      trace::OpRecord pending = op.pending;
      pending.end_ns = static_cast<std::int64_t>(launch.op_ticket[i]);
      records[n++] = pending;
    } else if (recorder.capturing(op.stream)) {
      recorder.counters().ops_captured_into_graphs.fetch_add(1, std::memory_order_relaxed);
      continue;  // captured into a graph: no op, so no collective row either
    } else {
      recorder.counters().ops_untimed_no_timing_slot.fetch_add(1, std::memory_order_relaxed);
    }
    recorder.push(thread, std::span<const trace::Record>(records, n));
  }
}

}  // namespace syncopate::preload
