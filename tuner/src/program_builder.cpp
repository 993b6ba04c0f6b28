#include "program_builder.hpp"

#include <algorithm>

#include "syncopate/tuner/sharded_fusion.hpp"
#include "syncopate/analyzer/collectives.hpp"

namespace syncopate::tuner {

ProgramBuilder::ProgramBuilder(const WhatIfModel& model, ProgramContext& ctx, std::uint32_t rank)
    : model_(model), ctx_(ctx), rank_(rank), host_(rank), serialise_communicators_(!model.calls().imported) {
  if (ctx_.program.hosts.size() <= rank_) ctx_.program.hosts.resize(rank_ + 1);
  const RecordedRank& calls = model_.calls().ranks[rank_];
  const std::size_t first = model_.windowCalls(rank_).first;
  if (first < calls.calls.size()) origin_ = calls.calls[first].start;
}

void ProgramBuilder::keepAbsentPeers(std::uint32_t sim_op, analyzer::Index op) {
  if (sim_op == kNoOp || op == analyzer::kNone) return;
  if (const auto start = model_.absentPeersStart(op)) {
    ctx_.program.ops[sim_op].not_before_ns = static_cast<double>(*start - origin_);
  }
}

void ProgramBuilder::beginCall(const RecordedCall& call, bool simulate, double cpu_before_ns, std::uint32_t host) {
  current_ = &call;
  simulate_ = simulate;
  host_ = host;
  if (ctx_.program.hosts.size() <= host_) ctx_.program.hosts.resize(host_ + 1);
  if (simulate_ && cpu_before_ns > 0) ctx_.program.hosts[host_].push_back({SimProgram::StepKind::Cpu, cpu_before_ns, 0});
}

void ProgramBuilder::endCall(double cpu_after_ns) {
  if (simulate_ && cpu_after_ns > 0) ctx_.program.hosts[host_].push_back({SimProgram::StepKind::Cpu, cpu_after_ns, 0});
}

std::uint32_t ProgramBuilder::stream(StreamHandle handle) {
  for (const auto& [h, s] : streams_)
    if (h == handle) return s;
  const std::uint32_t s = ctx_.program.addStream(rank_);
  streams_.emplace_back(handle, s);
  if (last_op_.size() <= s) last_op_.resize(s + 1, kNoOp);
  return s;
}

std::uint32_t ProgramBuilder::addOp(StreamHandle handle, OpClass c, double work_ns, std::uint32_t dep,
                                    std::uint32_t match) {
  if (!simulate_) return kNoOp;
  const std::uint32_t s = stream(handle);
  const std::uint32_t deps[1] = {dep};
  const std::span<const std::uint32_t> waits = dep == kNoOp ? std::span<const std::uint32_t>{} : std::span(deps);
  const std::uint32_t op =
      ctx_.program.addOp(s, c, std::max(0.0, work_ns), waits, match, static_cast<std::int32_t>(current_->iteration));
  ctx_.program.hosts[host_].push_back({SimProgram::StepKind::Issue, 0, op});
  last_op_[s] = op;
  if (match != kNoMatch) ++ctx_.match_participants[match];
  return op;
}

void ProgramBuilder::hostWaitFor(std::uint32_t op) {
  if (!simulate_ || op == kNoOp) return;
  ctx_.program.hosts[host_].push_back({SimProgram::StepKind::Wait, 0, op});
}

std::uint32_t ProgramBuilder::matchOf(std::int64_t comm, std::int64_t seq, std::uint64_t offset, std::int32_t ranks) {
  auto [it, inserted] =
      ctx_.matches.emplace(std::make_tuple(comm, seq, offset), static_cast<std::uint32_t>(ctx_.matches.size()));
  if (inserted) {
    ctx_.match_participants.push_back(0);
    ctx_.match_expected.push_back(ranks);
  }
  return it->second;
}

void ProgramBuilder::collective(StreamHandle handle, const CollectiveArgs& args, analyzer::Index measured_op,
                                std::int64_t seq, std::uint64_t offset) {
  const std::uint32_t match = matchOf(static_cast<std::int64_t>(args.comm), seq, offset, model_.participants(args));
  std::uint32_t channels = 0;
  if (ctx_.channels != nullptr) {
    const std::int64_t bytes = analyzer::ncclTestsBytes(args.type, static_cast<std::int64_t>(args.count), args.dtype, args.comm_size);
    if (bytes >= 0) channels = channelsFor(*ctx_.channels, args.type, static_cast<std::uint64_t>(bytes));
  }
  const auto last = last_collective_.find(args.comm);
  const std::uint32_t after = serialise_communicators_ && last != last_collective_.end() ? last->second : kNoOp;
  const std::uint32_t op =
      addOp(handle, OpClass::Communication, model_.collectiveNs(args, measured_op, channels), after, match);
  if (op != kNoOp) ctx_.program.ops[op].interference = model_.interferenceWeight(measured_op, channels);
  if (serialise_communicators_ && op != kNoOp) last_collective_[args.comm] = op;
  keepAbsentPeers(op, measured_op);
}

bool ProgramBuilder::prepareEvents(std::uint32_t count) {
  slot_op_.assign(count, kNoOp);
  slot_unit_.assign(count, 0);
  return true;
}

void ProgramBuilder::passthrough(const Call& call) {
  switch (call.kind) {
    case CallKind::Kernel:
    case CallKind::Memcpy:
    case CallKind::Memset: {
      const analyzer::Index op = current_->op;
      const std::uint32_t o = addOp(call.stream, model_.opClass(op), model_.standaloneNs(op));
      keepAbsentPeers(o, op);
      if (call.synchronous) hostWaitFor(o);
      break;
    }
    case CallKind::Collective: collective(call.stream, call.collective, current_->op, current_->collective_seq); break;
    case CallKind::EventRecord: event_op_[call.event] = marker(call.stream); break;
    case CallKind::StreamWait: {
      auto it = event_op_.find(call.event);
      marker(call.stream, it == event_op_.end() ? kNoOp : it->second);
      break;
    }
    case CallKind::StreamSync:
      if (call.stream == kLegacyStream) {
        // The legacy stream's work waited for every blocking stream's, so its synchronize does
        // too; non-blocking streams' (PyTorch's NCCL streams, the runtime's) it does not.
        const analyzer::Index run_rank = model_.calls().ranks[rank_].rank;
        for (const auto& [handle, s] : streams_) {
          if (!model_.notBlocking(run_rank, handle)) hostWaitFor(last_op_[s]);
        }
      } else {
        hostWaitFor(last_op_[stream(call.stream)]);
      }
      break;
    case CallKind::EventSync: {
      auto it = event_op_.find(call.event);
      if (it != event_op_.end()) hostWaitFor(it->second);
      break;
    }
    case CallKind::DeviceSync:
      for (std::uint32_t op : last_op_) hostWaitFor(op);
      break;
    default: break;  // no GPU work of its own
  }
}

void ProgramBuilder::recordApplicationEvent(const Call& call, StreamHandle s) { event_op_[call.event] = marker(s); }

void ProgramBuilder::issueHeld(const HeldCollective& held) {
  const RecordedCall& call = model_.calls().ranks[rank_].calls[held.call_id];
  collective(held.stream, held.args, call.op, call.collective_seq);
}

void ProgramBuilder::recordEvent(EventSlot event, StreamHandle s) {
  const std::uint32_t op = marker(s);
  slot_op_[event] = op;
  slot_unit_[event] = 0;
  if (expect_unit_done_) {
    expect_unit_done_ = false;
    unit_done_op_.push_back(op);
    slot_unit_[event] = units_;  // unit number + 1
  }
}

std::uint32_t ProgramBuilder::delayedUnitOp(EventSlot slot) const {
  const std::uint64_t unit = slot_unit_[slot] - 1;
  auto f = std::upper_bound(flush_first_unit_.begin(), flush_first_unit_.end(), unit);
  if (f == flush_first_unit_.begin()) return kNoOp;
  --f;
  if (f == flush_first_unit_.begin()) return kNoOp;  // no previous iteration's bucket: nothing to wait for
  const std::uint64_t first = *f;
  const std::uint64_t previous = *(f - 1);
  const std::uint64_t size = first - previous;
  const std::uint64_t offset = unit - first;
  if (offset >= size) return kNoOp;
  return unit_done_op_[previous + offset];
}

void ProgramBuilder::waitEvent(StreamHandle s, EventSlot event) {
  std::uint32_t dep = slot_op_[event];
  if (ctx_.delayed && slot_unit_[event] != 0) dep = delayedUnitOp(event);
  marker(s, dep);
}

void ProgramBuilder::hostWait(EventSlot event) {
  std::uint32_t op = slot_op_[event];
  if (ctx_.delayed && slot_unit_[event] != 0) op = delayedUnitOp(event);
  hostWaitFor(op);
}

void ProgramBuilder::queryWith(const Call&, EventSlot) {}

void ProgramBuilder::issueUnit(const UnitIssue& unit) {
  const CollectiveArgs& first = unit.members.front().args;
  const double elem = trace::dataTypeSize(first.dtype);
  const HostTimings& host = model_.hostTimings();
  auto copy = [&](double bytes) {
    addOp(unit.stream, OpClass::Memory, host.copy_latency_ns + bytes / host.copy_bytes_per_ns);
  };
  auto eachSlice = [&](auto&& fn) {
    std::uint64_t at = 0;
    for (const HeldCollective& m : unit.members) {
      const std::uint64_t lo = std::max(at, unit.offset);
      const std::uint64_t hi = std::min(at + m.args.count, unit.offset + unit.count);
      if (hi > lo) fn(static_cast<double>(hi - lo) * elem);
      at += m.args.count;
    }
  };
  // The copies the runtime makes (PlanRuntime::issueUnit): of each member's slices into the
  // fusion buffer and back, rank by rank for reduce-scatters and all-gathers.
  const bool sharded = shardedFused(unit);
  const ShardedFusion f = sharded ? shardedFusion(unit) : ShardedFusion{};
  auto eachShardedCopy = [&](bool gathered_side) {
    forEachColumn(unit, [&](const CollectiveArgs& m, std::uint64_t) {
      copy(static_cast<double>(m.count * f.elem * (gathered_side ? f.ranks : 1)));
    });
  };
  const bool scatter = first.type == trace::CollType::ReduceScatter;
  if (sharded) {
    eachShardedCopy(scatter);
  } else if (!unit.contiguous) {
    eachSlice(copy);
  }
  CollectiveArgs args = first;
  args.count = unit.count;
  // Named by its first member's call and where it starts in the bucket: the same on every rank.
  collective(unit.stream, args, analyzer::kNone,
             model_.calls().ranks[rank_].calls[unit.members.front().call_id].collective_seq, unit.offset);
  if (sharded) {
    eachShardedCopy(!scatter);
  } else if (!unit.contiguous) {
    eachSlice(copy);
  }
  ++units_;
  expect_unit_done_ = true;
}

bool ProgramBuilder::agree(std::uint64_t, std::span<const HeldCollective> group, bool across_ranks) {
  flush_first_unit_.push_back(units_);
  if (simulate_ && across_ranks && !group.empty()) {
    const std::int64_t first = model_.calls().ranks[rank_].calls[group.front().call_id].collective_seq;
    const std::uint32_t barrier =
        ctx_.barriers.emplace(first, static_cast<std::uint32_t>(ctx_.barriers.size())).first->second;
    // A host barrier across ranks: the runtime all-reduces a 16-byte digest and waits for it.
    CollectiveArgs digest;
    digest.type = trace::CollType::AllReduce;
    digest.dtype = trace::DataType::Uint64;
    digest.count = 2;
    digest.comm_size = model_.jobRanks();
    const auto& comm_ids = model_.calls().ranks[rank_].comm_ids;
    digest.comm = comm_ids.empty() ? 0 : static_cast<std::uint64_t>(comm_ids.front());
    ctx_.program.hosts[host_].push_back(
        {SimProgram::StepKind::Barrier, std::max(0.0, model_.collectiveNs(digest)), barrier});
  }
  return true;
}

void ProgramBuilder::fallback(Fallback why, const Call&) { ++fallbacks[static_cast<std::size_t>(why)]; }

}  // namespace syncopate::tuner
