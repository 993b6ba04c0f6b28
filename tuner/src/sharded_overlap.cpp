#include "syncopate/tuner/sharded_overlap.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace syncopate::tuner {
namespace {

// Whether every member of `g` is a `type` on communicator `comm_index`.
bool allOf(const RecordedGroup& g, trace::CollType type, std::uint32_t comm_index) {
  return !g.members.empty() && std::all_of(g.members.begin(), g.members.end(), [&](const CollectiveArgs& a) {
    return a.type == type && a.comm_index == comm_index;
  });
}

// Where one member was issued (Placement), from the calls after it: the first call that gives
// the producer's stream more work, or that makes it (or the host) wait for the member's stream
// past the member, decides. Host waits count on the member's own thread only (another thread's
// synchronous copy or cudaFree says nothing of how the step waits for it).
Placement placementOf(const RecordedRank& rank, std::size_t member, StreamHandle produced_on) {
  const StreamHandle own = rank.calls[member].call.stream;
  if (own == produced_on) return Placement::InLine;
  const analyzer::Index thread = rank.calls[member].thread;
  std::set<std::uint64_t> after;  // events recorded on the member's stream after it
  for (std::size_t i = member + 1; i < rank.calls.size(); ++i) {
    const Call& c = rank.calls[i].call;
    const bool same_thread = rank.calls[i].thread == thread;
    switch (c.kind) {
      case CallKind::EventRecord:
        if (c.stream == own) after.insert(c.event);
        else after.erase(c.event);  // recorded again elsewhere: no longer the member's
        break;
      case CallKind::StreamWait:
        if (c.stream == produced_on && after.count(c.event) > 0) return Placement::WaitedAtOnce;
        break;
      case CallKind::EventSync:
        if (same_thread && after.count(c.event) > 0) return Placement::WaitedAtOnce;
        break;
      case CallKind::StreamSync:
        if (same_thread && c.stream == own) return Placement::WaitedAtOnce;
        break;
      case CallKind::DeviceSync:
        if (same_thread) return Placement::WaitedAtOnce;
        break;
      case CallKind::Kernel:
      case CallKind::Memcpy:
      case CallKind::Memset:
      case CallKind::Collective:
      case CallKind::Barrier:  // a graph launch, an unknown API: work on that stream as well
        if (c.stream == produced_on) return Placement::Overlapped;
        break;
      default: break;
    }
  }
  return Placement::WaitedAtOnce;  // the run ended before the compute stream got more work
}

// Where a step's collectives of `type` on `comm_index` were issued: overlapped when any one ran
// while the compute stream went on (the setting's last bucket is waited for at once in any
// case), else waited at once when any was, else in line; nullopt when none has a producer among
// the calls before it (nothing tells).
std::optional<Placement> placementOf(const RecordedRank& rank, std::int64_t step, trace::CollType type,
                                     std::uint32_t comm_index) {
  std::optional<Placement> out;
  for (std::size_t i = 0; i < rank.calls.size(); ++i) {
    const RecordedCall& rc = rank.calls[i];
    if (rc.iteration != step || rc.call.kind != CallKind::Collective) continue;
    if (rc.call.collective.type != type || rc.call.collective.comm_index != comm_index) continue;
    const std::size_t producer = producerOf(rank, i);
    if (producer == i) continue;
    const Placement p = placementOf(rank, i, rank.calls[producer].call.stream);
    if (!out || static_cast<int>(p) > static_cast<int>(*out)) out = p;
  }
  return out;
}

}  // namespace

const char* toString(Placement p) {
  switch (p) {
    case Placement::InLine: return "in line";
    case Placement::WaitedAtOnce: return "waited at once";
    case Placement::Overlapped: return "overlapped";
  }
  return "?";
}

const char* settingName(ShardedOverlap which) {
  return which == ShardedOverlap::GradReduce ? "overlap_grad_reduce" : "overlap_param_gather";
}

std::string ShardedOverlaps::with() const {
  std::string out;
  for (const ShardedOverlap which : {ShardedOverlap::GradReduce, ShardedOverlap::ParamGather}) {
    if (!(which == ShardedOverlap::GradReduce ? grad_reduce : param_gather)) continue;
    if (!out.empty()) out += ", ";
    out += settingName(which);
    out += "=on";
  }
  return out;
}

ShardedOverlaps ShardedOverlaps::namedIn(const std::string& with) {
  const auto named = [&](ShardedOverlap which) {
    return with.find(std::string(settingName(which)) + "=on") != std::string::npos;
  };
  return {named(ShardedOverlap::GradReduce), named(ShardedOverlap::ParamGather)};
}

ShardedOptimizerRun findShardedOptimizer(const WhatIfModel& model) {
  ShardedOptimizerRun out;
  if (model.ranks() == 0 || model.predictedIterations().empty()) {
    out.why_not = "the model holds no iteration to look at";
    return out;
  }
  const RecordedRank& rank = model.calls().ranks[0];
  const std::int64_t step = model.predictedIterations().front();
  const std::optional<ReducingCommunicator> most = mostReducingCommunicator(rank, step);
  if (!most) {
    out.why_not = "the run's steady iterations issue no reduce-scatter (no sharded optimizer's gradients)";
    return out;
  }
  out.comm_index = most->index;
  out.comm = most->comm;
  // Its reduce-scatters, and the all-gathers after the last of them and before the first (the
  // previous step's parameters, gathered in this one's forward: Megatron-LM's
  // --overlap-param-gather issues them from forward's pre-hooks).
  const OptimizerCollectives collectives = optimizerCollectives(rank, step, out.comm);
  if (collectives.gathers_between > 0) {
    out = {};
    out.why_not = "the run gathers parameters between its gradient reduce-scatters (fully sharded: FSDP or ZeRO stage "
                  "3; FSDP's settings are read and predicted apart)";
    return out;
  }
  out.reduce_scatters = collectives.reduces.size();
  for (std::size_t i : collectives.reduces) out.gradient_bytes += rank.calls[i].call.collective.send_bytes();
  for (const auto* gathers : {&collectives.leading_gathers, &collectives.gathers}) {
    out.all_gathers += gathers->size();
    for (std::size_t i : *gathers) out.parameter_bytes += rank.calls[i].call.collective.recv_bytes();
  }
  const std::optional<Placement> reduce = placementOf(rank, step, trace::CollType::ReduceScatter, out.comm_index);
  if (!reduce) {
    out = {};
    out.why_not = "no call of the modelled steps touches the gradients the reduce-scatters reduce before them, so "
                  "where they were issued against backward is not known";
    return out;
  }
  out.found = true;
  out.reduce_placement = *reduce;
  out.gather_placement =
      placementOf(rank, step, trace::CollType::AllGather, out.comm_index).value_or(Placement::InLine);
  return out;
}

OptimizerCollectives optimizerCollectives(const RecordedRank& rank, std::int64_t step, std::uint64_t comm) {
  OptimizerCollectives out;
  const auto [begin, end] = stepCalls(rank, step);
  for (std::size_t i = begin; i < end; ++i) {
    const RecordedCall& rc = rank.calls[i];
    if (rc.iteration != step || rc.call.kind != CallKind::Collective) continue;
    if (rc.call.collective.comm != comm) continue;  // rank 0's communicator index may be another's
    if (rc.call.collective.type == trace::CollType::ReduceScatter) {
      if (out.reduces.empty()) out.leading_gathers = std::move(out.gathers);
      else out.gathers_between += out.gathers.size();
      out.gathers.clear();  // the step's all-gathers come after its last reduce-scatter
      out.reduces.push_back(i);
    } else if (rc.call.collective.type == trace::CollType::AllGather) {
      out.gathers.push_back(i);
    }
  }
  if (out.reduces.empty()) {
    out.leading_gathers = std::move(out.gathers);
    out.gathers.clear();
  }
  return out;
}

std::size_t nextCallOn(const RecordedRank& rank, std::size_t i, StreamHandle stream, std::size_t end) {
  std::size_t k = i + 1;
  while (k < end && rank.calls[k].call.stream != stream) ++k;
  return std::min(k, end);
}

std::optional<ReadyPair> readyPairBefore(const RecordedRank& rank, std::size_t i) {
  const StreamHandle own = rank.calls[i].call.stream;
  std::size_t j = i;
  while (j-- > 0 && rank.calls[j].call.stream != own) {}
  if (j == static_cast<std::size_t>(-1) || rank.calls[j].call.kind != CallKind::StreamWait) return std::nullopt;
  if (const std::optional<std::size_t> record = recordOfWait(rank, j)) return ReadyPair{*record, j};
  return std::nullopt;
}

std::optional<ReducingCommunicator> mostReducingCommunicator(const RecordedRank& rank, std::int64_t step) {
  struct Reduced {
    std::uint64_t bytes = 0;
    std::uint64_t comm = 0;
  };
  std::map<std::uint32_t, Reduced> reduced;  // what each communicator reduce-scatters, by its index
  for (const RecordedCall& rc : rank.calls) {
    const CollectiveArgs& a = rc.call.collective;
    if (rc.iteration != step || rc.call.kind != CallKind::Collective || a.type != trace::CollType::ReduceScatter) continue;
    reduced[a.comm_index].bytes += a.send_bytes();
    reduced[a.comm_index].comm = a.comm;
  }
  if (reduced.empty()) return std::nullopt;
  const auto most = std::max_element(reduced.begin(), reduced.end(),
                                     [](const auto& a, const auto& b) { return a.second.bytes < b.second.bytes; });
  return ReducingCommunicator{most->first, most->second.comm};
}

std::optional<std::size_t> recordOfWait(const RecordedRank& rank, std::size_t wait) {
  const std::uint64_t event = rank.calls[wait].call.event;
  for (std::size_t k = wait; k-- > 0;) {
    const Call& c = rank.calls[k].call;
    if (c.kind == CallKind::EventRecord && c.event == event) return k;
  }
  return std::nullopt;
}

std::pair<std::size_t, std::size_t> stepCalls(const RecordedRank& rank, std::int64_t step) {
  std::size_t begin = rank.calls.size(), end = rank.calls.size();
  for (const auto& [iteration, first] : rank.iteration_first_call) {
    if (iteration == step) begin = std::min(begin, first);
    // The step's calls end before the one after next begins (a call of the step issued late on
    // another thread may follow the next step's first).
    if (iteration >= step + 2) {
      end = first;
      break;
    }
  }
  return {std::min(begin, end), end};
}

ScheduleRules shardedOverlapRules(const std::vector<RecordedGroup>& groups, const ShardedOptimizerRun& optimizer,
                                  bool grad_reduce, bool param_gather) {
  Knobs program_order;
  program_order.communication_stream = true;
  program_order.bucket_bytes = 0;  // the framework's own buckets
  program_order.order = Order::Program;
  program_order.per_bucket_waits = true;
  Knobs need_order = program_order;
  need_order.order = Order::Need;
  const ScheduleRules reduce = rulesFor(program_order, groups);
  ScheduleRules rules = rulesFor(need_order, groups);
  for (GroupPlan& plan : rules.groups) {
    const auto g = std::find_if(groups.begin(), groups.end(),
                                [&](const RecordedGroup& r) { return r.signature == plan.signature; });
    const bool reduces = g != groups.end() && allOf(*g, trace::CollType::ReduceScatter, optimizer.comm_index);
    const bool gathers = g != groups.end() && allOf(*g, trace::CollType::AllGather, optimizer.comm_index);
    if (reduces) plan = *reduce.find(plan.signature);
    plan.keep = !((reduces && grad_reduce) || (gathers && param_gather));
  }
  return rules;
}

std::string shardedOverlapHowTo(ShardedOverlap which, const std::string& framework) {
  if (which == ShardedOverlap::GradReduce) {
    if (framework == "Megatron-LM") {
      return "--overlap-grad-reduce on Megatron-LM's command line (with --use-distributed-optimizer)";
    }
    if (framework == "DeepSpeed") return R"("overlap_comm": true under "zero_optimization" in the DeepSpeed config)";
    return R"(Megatron-LM: --overlap-grad-reduce; DeepSpeed ZeRO stage 1/2: "overlap_comm": true under )"
           R"("zero_optimization"; an optimizer of your own: reduce-scatter each gradient bucket on a stream of its )"
           "own as soon as backward has written it, and wait for them all before the step";
  }
  if (framework == "Megatron-LM") {
    return "--overlap-param-gather on Megatron-LM's command line (with --use-distributed-optimizer and "
           "--overlap-grad-reduce, which it requires)";
  }
  if (framework == "DeepSpeed") {
    return "DeepSpeed's ZeRO stage 1/2 gathers the updated parameters inside its step and has no setting to overlap "
           "them with the next forward";
  }
  return "Megatron-LM: --overlap-param-gather (with --overlap-grad-reduce, which it requires); an optimizer of your "
         "own: all-gather each parameter bucket on a stream of its own after the step, first needed first, and have "
         "forward wait for each bucket just before it reads it";
}

}  // namespace syncopate::tuner
