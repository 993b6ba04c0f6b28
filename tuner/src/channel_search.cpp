#include "syncopate/tuner/channel_search.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <string>

#include "syncopate/analyzer/collectives.hpp"
#include "syncopate/analyzer/parallel_for.hpp"

namespace syncopate::tuner {
namespace {

double ms(double ns) { return ns / 1e6; }

// Sizes that bound the classes within a kind: latency-bound collectives (under 1 MiB), those of a
// few channels' worth, and those that need the link's whole bandwidth (16 MiB and more) may each
// want another count.
constexpr std::uint64_t kSizeClassBounds[] = {std::uint64_t{1} << 20, std::uint64_t{16} << 20};

std::size_t sizeClass(std::uint64_t bytes) {
  std::size_t c = 0;
  for (std::uint64_t bound : kSizeClassBounds) c += bytes >= bound ? 1 : 0;
  return c;
}

// Per settable kind and size class of the modelled iterations: the smallest and largest size.
std::map<std::pair<trace::CollType, std::size_t>, std::pair<std::uint64_t, std::uint64_t>> sizeClasses(const WhatIfModel& model) {
  std::map<std::pair<trace::CollType, std::size_t>, std::pair<std::uint64_t, std::uint64_t>> sizes;
  for (std::size_t r = 0; r < model.ranks(); ++r) {
    const RecordedRank& rank = model.calls().ranks[r];
    const auto [begin, end] = model.windowCalls(r);
    for (std::size_t i = begin; i < end && i < rank.calls.size(); ++i) {
      const Call& call = rank.calls[i].call;
      if (call.kind != CallKind::Collective || !channelsSettable(call.collective.type)) continue;
      const CollectiveArgs& a = call.collective;
      const std::int64_t signed_bytes = analyzer::ncclTestsBytes(a.type, static_cast<std::int64_t>(a.count), a.dtype, a.comm_size);
      if (signed_bytes < 0) continue;
      const auto bytes = static_cast<std::uint64_t>(signed_bytes);
      auto [it, inserted] = sizes.try_emplace({a.type, sizeClass(bytes)}, bytes, bytes);
      it->second.first = std::min(it->second.first, bytes);
      it->second.second = std::max(it->second.second, bytes);
    }
  }
  return sizes;
}

// Rules of one kind for neighbouring size classes with the same count become one (fewer lines
// for NCCL's tuner); `rules` in order of kind and size.
std::vector<ChannelRule> merged(std::vector<ChannelRule> rules) {
  std::vector<ChannelRule> out;
  for (const ChannelRule& rule : rules) {
    if (!out.empty() && out.back().collective == rule.collective && out.back().channels == rule.channels &&
        sizeClass(out.back().max_bytes) + 1 == sizeClass(rule.min_bytes)) {
      out.back().max_bytes = rule.max_bytes;
    } else {
      out.push_back(rule);
    }
  }
  return out;
}

// Why channel counts cannot be predicted from this recording, in one sentence; empty when they can.
std::string whyNotPredictable(const RecordedChannels& recorded) {
  if (recorded.usual == 0) {
    return "the recording has no channel count of any collective (NCCL's profiler plugin was not loaded, or the run "
           "was imported)";
  }
  if (recorded.per_channel_bytes_per_ns <= 0 && recorded.fitted.empty()) {
    return "the recording has no per-channel bandwidth (NCCL did not load Syncopate as its tuner plugin), so what "
           "fewer channels would cost cannot be predicted";
  }
  if (recorded.usual < 2) return "the collectives already run on one channel";
  return {};
}

// The counts tried: 1, 2, 4, ... below the count the collectives were recorded with.
std::vector<std::uint32_t> fewerChannels(const RecordedChannels& recorded) {
  std::vector<std::uint32_t> counts;
  for (std::uint32_t c = 1; c < recorded.usual; c *= 2) counts.push_back(c);
  return counts;
}

// Each set of rules predicted on `schedule`, side by side on the machine's cores; a set whose
// prediction ran out of memory goes unpredicted, the others stand.
std::vector<std::optional<Prediction>> predictEach(const WhatIfModel& model, const ScheduleRules* schedule,
                                                   const std::vector<std::vector<ChannelRule>>& rule_sets) {
  std::vector<std::optional<Prediction>> predicted(rule_sets.size());
  analyzer::parallelFor(rule_sets.size(), [&](std::size_t k) {
    try {
      predicted[k] = model.predict(schedule, false, &rule_sets[k]);
    } catch (const std::exception&) {
      predicted[k].reset();
    }
  });
  return predicted;
}

}  // namespace

ChannelSearch searchChannels(const WhatIfModel& model, const ScheduleRules* schedule, double min_gain) {
  ChannelSearch out;
  const RecordedChannels& recorded = model.channels();
  out.recorded_channels = recorded.usual;
  out.per_channel_bytes_per_ns = recorded.per_channel_bytes_per_ns;
  out.per_channel_source = recorded.per_channel_source;
  out.fitted = recorded.fitted;
  if (!recorded.fitted.empty()) {
    out.per_channel_source = "fitted from collectives on several channel counts (communicators under `fitted`)" +
                             std::string(recorded.per_channel_source.empty() ? "" : "; NCCL's own for the others");
  }
  out.why_not = whyNotPredictable(recorded);
  if (!out.why_not.empty()) return out;
  const auto sizes = sizeClasses(model);
  if (sizes.empty()) {
    out.why_not = "the modelled iterations issue no collective whose channels NCCL's tuner interface sets";
    return out;
  }
  const Prediction base = model.predict(schedule);
  if (!base.ok) {
    out.why_not = "the schedule's own prediction failed: " + base.error;
    return out;
  }
  out.searched = true;
  out.schedule_ms = ms(base.iteration_ns);
  // Each kind and size class on each count alone.
  std::vector<std::vector<ChannelRule>> rule_sets;
  for (const auto& [kind_class, range] : sizes) {
    for (std::uint32_t c : fewerChannels(recorded)) {
      out.candidates.push_back({{kind_class.first, range.first, range.second, c}, 0, 0});
      rule_sets.push_back({out.candidates.back().rule});
    }
  }
  const std::vector<std::optional<Prediction>> predicted = predictEach(model, schedule, rule_sets);
  // The best count of each kind and size class (the candidates of one class share its range).
  std::map<std::tuple<trace::CollType, std::uint64_t>, const ChannelCandidate*> best;
  for (std::size_t k = 0; k < out.candidates.size(); ++k) {
    ChannelCandidate& c = out.candidates[k];
    if (!predicted[k] || !predicted[k]->ok) continue;
    c.predicted_iteration_ms = ms(predicted[k]->iteration_ns);
    c.gain = 1.0 - c.predicted_iteration_ms / out.schedule_ms;
    auto [it, inserted] = best.try_emplace({c.rule.collective, c.rule.min_bytes}, &c);
    if (!inserted && c.predicted_iteration_ms < it->second->predicted_iteration_ms) it->second = &c;
  }
  std::vector<ChannelRule> chosen;
  for (const auto& [kind_class, c] : best) {
    if (c->gain >= min_gain) chosen.push_back(c->rule);
  }
  out.chosen = merged(std::move(chosen));
  out.predicted_iteration_ms = out.schedule_ms;
  if (out.chosen.empty()) return out;
  const Prediction together = model.predict(schedule, false, &out.chosen);
  if (!together.ok || ms(together.iteration_ns) >= out.schedule_ms) {
    out.chosen.clear();
    return out;
  }
  out.predicted_iteration_ms = ms(together.iteration_ns);
  out.gain = 1.0 - out.predicted_iteration_ms / out.schedule_ms;
  return out;
}

std::vector<std::pair<std::uint32_t, double>> predictMaxCtas(const WhatIfModel& model) {
  std::vector<std::pair<std::uint32_t, double>> out;
  if (!whyNotPredictable(model.channels()).empty()) return out;
  const std::vector<std::uint32_t> counts = fewerChannels(model.channels());
  // A rule per kind over every size: what the environment variable does to each collective.
  std::vector<std::vector<ChannelRule>> rule_sets;
  for (std::uint32_t c : counts) {
    std::vector<ChannelRule>& rules = rule_sets.emplace_back();
    for (trace::CollType kind : {trace::CollType::AllReduce, trace::CollType::AllGather, trace::CollType::ReduceScatter,
                                 trace::CollType::Broadcast, trace::CollType::Reduce}) {
      rules.push_back({kind, 0, std::numeric_limits<std::uint64_t>::max(), c});
    }
  }
  const std::vector<std::optional<Prediction>> predicted = predictEach(model, nullptr, rule_sets);
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (predicted[k] && predicted[k]->ok) out.emplace_back(counts[k], predicted[k]->iteration_ns);
  }
  return out;
}

}  // namespace syncopate::tuner
