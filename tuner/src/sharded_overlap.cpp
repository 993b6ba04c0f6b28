#include "syncopate/tuner/sharded_overlap.hpp"

#include <algorithm>

namespace syncopate::tuner {
namespace {

bool allReduceScatters(const RecordedGroup& g) {
  return !g.members.empty() && std::all_of(g.members.begin(), g.members.end(), [](const CollectiveArgs& a) {
    return a.type == trace::CollType::ReduceScatter;
  });
}

}  // namespace

ShardedGradReduce findShardedGradReduce(const WhatIfModel& model, const std::vector<RecordedGroup>& groups) {
  ShardedGradReduce out;
  if (model.ranks() == 0) {
    out.why_not = "the model holds no rank";
    return out;
  }
  const RecordedRank& rank = model.calls().ranks[0];
  std::size_t in_line = 0, placed = 0;  // members issued on their producers' stream; with a producer
  for (const RecordedGroup& g : groups) {
    if (!allReduceScatters(g)) continue;
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      const std::size_t produced_by = g.producer_call[i];
      // A member with no producer in the modelled calls tells nothing of where it was issued.
      if (produced_by == g.member_call[i]) continue;
      ++placed;
      if (rank.call(g.member_call[i]).stream == rank.call(produced_by).stream) ++in_line;
    }
  }
  // One step's reduce-scatters, counted in its calls (the groups list each signature once).
  const std::int64_t step = model.predictedIterations().empty() ? -1 : model.predictedIterations().front();
  bool gathers_between = false;  // an all-gather after the step's first reduce-scatter and before its last
  std::size_t gathers_after_first = 0;
  for (const RecordedCall& rc : rank.calls) {
    if (rc.iteration != step || rc.call.kind != CallKind::Collective) continue;
    const trace::CollType type = rc.call.collective.type;
    if (type == trace::CollType::AllGather && out.reduce_scatters > 0) ++gathers_after_first;
    if (type != trace::CollType::ReduceScatter) continue;
    gathers_between = gathers_between || gathers_after_first > 0;
    ++out.reduce_scatters;
    out.bytes += rc.call.collective.send_bytes();
  }
  if (gathers_between) {
    out.why_not = "the run gathers parameters between its gradient reduce-scatters (fully sharded: FSDP or ZeRO stage "
                  "3), whose prefetch settings are not predicted";
    out.reduce_scatters = 0;
    out.bytes = 0;
    return out;
  }
  if (out.reduce_scatters == 0) {
    out.why_not = "the run's steady iterations issue no group of reduce-scatters (no sharded optimizer's gradients)";
    return out;
  }
  if (placed == 0) {
    out.why_not = "no kernel of the modelled calls writes the gradients the reduce-scatters reduce, so where they "
                  "were issued against backward is not known";
    return out;
  }
  out.found = true;
  out.overlapped = in_line == 0;
  return out;
}

ScheduleRules overlapGradReduceRules(const std::vector<RecordedGroup>& groups) {
  Knobs k;
  k.communication_stream = true;
  k.bucket_bytes = 0;  // the framework's own buckets
  k.order = Order::Program;
  k.per_bucket_waits = true;
  ScheduleRules rules = rulesFor(k, groups);
  for (GroupPlan& plan : rules.groups) {
    const auto g = std::find_if(groups.begin(), groups.end(),
                                [&](const RecordedGroup& r) { return r.signature == plan.signature; });
    plan.keep = g == groups.end() || !allReduceScatters(*g);
  }
  return rules;
}

std::string overlapGradReduceHowTo(const std::string& framework) {
  if (framework == "Megatron-LM") {
    return "--overlap-grad-reduce on Megatron-LM's command line (with --use-distributed-optimizer)";
  }
  if (framework == "DeepSpeed") return R"("overlap_comm": true under "zero_optimization" in the DeepSpeed config)";
  return R"(Megatron-LM: --overlap-grad-reduce; DeepSpeed ZeRO stage 1/2: "overlap_comm": true under )"
         R"("zero_optimization"; an optimizer of your own: reduce-scatter each gradient bucket on a stream of its own )"
         "as soon as backward has written it, and wait for them all before the step";
}

}  // namespace syncopate::tuner
