#include "syncopate/tuner/channels.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace syncopate::tuner {

std::uint32_t channelsFor(std::span<const ChannelRule> rules, trace::CollType collective, std::uint64_t bytes) noexcept {
  for (const ChannelRule& rule : rules) {
    if (rule.collective == collective && rule.min_bytes <= bytes && bytes <= rule.max_bytes) return rule.channels;
  }
  return 0;
}

std::string channelRulesText(std::span<const ChannelRule> rules) {
  std::string text;
  for (const ChannelRule& rule : rules) {
    text += fmt::format("{}{} on {} channel{}", text.empty() ? "" : ", ", trace::toString(rule.collective), rule.channels,
                        rule.channels == 1 ? "" : "s");
  }
  return text;
}

bool channelsSettable(trace::CollType collective) noexcept {
  switch (collective) {
    case trace::CollType::AllReduce:
    case trace::CollType::AllGather:
    case trace::CollType::ReduceScatter:
    case trace::CollType::Broadcast:
    case trace::CollType::Reduce: return true;
    default: return false;
  }
}

std::optional<ChannelFit> fitChannels(std::span<const ChannelSample> samples) {
  constexpr double kLeastBytes = 1 << 20;  // smaller transfers say more of latency than of bandwidth
  std::map<std::uint32_t, std::vector<double>> by_count;
  for (const ChannelSample& s : samples) {
    if (s.channels == 0 || s.bus_bytes < kLeastBytes || s.transfer_ns <= 0) continue;
    by_count[s.channels].push_back(s.bus_bytes / s.transfer_ns);
  }
  if (by_count.size() < 2) return std::nullopt;
  ChannelFit fit;
  double fastest = 0;
  for (auto& [count, bandwidths] : by_count) {
    std::sort(bandwidths.begin(), bandwidths.end());
    const std::size_t n = bandwidths.size();
    const double median = n % 2 == 1 ? bandwidths[n / 2] : (bandwidths[n / 2 - 1] + bandwidths[n / 2]) / 2;
    fit.bandwidth_by_count.emplace_back(count, median);
    fastest = std::max(fastest, median);
  }
  std::vector<double> per_channel;
  for (const auto& [count, bandwidth] : fit.bandwidth_by_count) {
    if (bandwidth < 0.9 * fastest) per_channel.push_back(bandwidth / count);
  }
  if (per_channel.empty()) {
    fit.bounded_only = true;
    fit.per_channel_bytes_per_ns = fastest / fit.bandwidth_by_count.front().first;
    return fit;
  }
  std::sort(per_channel.begin(), per_channel.end());
  const std::size_t n = per_channel.size();
  fit.per_channel_bytes_per_ns = n % 2 == 1 ? per_channel[n / 2] : (per_channel[n / 2 - 1] + per_channel[n / 2]) / 2;
  return fit;
}

namespace {

// The names NCCL's example tuner gives the collectives.
std::string_view confName(trace::CollType collective) {
  switch (collective) {
    case trace::CollType::AllReduce: return "allreduce";
    case trace::CollType::AllGather: return "allgather";
    case trace::CollType::ReduceScatter: return "reducescatter";
    case trace::CollType::Broadcast: return "broadcast";
    case trace::CollType::Reduce: return "reduce";
    default: return "";
  }
}

}  // namespace

std::string ncclTunerConf(std::span<const ChannelRule> rules, std::int32_t ranks, std::string_view source) {
  std::string out = fmt::format(
      "# NCCL tuner configuration written by syncopate tune from {}\n"
      "# For NCCL's example tuner plugin (NCCL_TUNER_PLUGIN, NCCL_TUNER_CONFIG_FILE): the channel count the plan\n"
      "# sets for each collective. The example tuner also wants an algorithm and a protocol: ring and simple,\n"
      "# NCCL's usual choice for bandwidth-bound collectives; change them where the recording shows others.\n"
      "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff\n",
      source);
  for (const ChannelRule& rule : rules) {
    const std::string_view name = confName(rule.collective);
    if (name.empty()) continue;
    out += fmt::format("{},{},{},ring,simple,{},-1,{},-1,-1\n", name, rule.min_bytes, rule.max_bytes, rule.channels, ranks);
  }
  return out;
}

}  // namespace syncopate::tuner
