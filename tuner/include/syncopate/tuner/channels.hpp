// How many NCCL channels (CTAs, hence SMs) a plan gives each collective, and what a recording
// says of channels (docs/tuner.md, "Channels").
//
// A rule names one collective kind and a range of sizes; the first rule that covers a
// collective gives its count, and a collective no rule covers keeps NCCL's own choice. Sizes
// are nccl-tests' (count × element size for an all-reduce, broadcast or reduce; that times the
// ranks for an all-gather or reduce-scatter), the same NCCL hands its tuner plugin. The runtime
// applies the rules through NCCL's tuner plugin interface (getCollInfo's nChannels), and
// `syncopate tune` also writes them as NCCL's example tuner reads them (nccl_tuner.conf).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "syncopate/trace/status.hpp"
#include "syncopate/trace/types.hpp"

namespace syncopate::analyzer {
struct RunModel;
}

namespace syncopate::tuner {

// The most channels an NCCL communicator has (MAXCHANNELS in NCCL 2.28).
inline constexpr std::uint32_t kMaxNcclChannels = 64;

struct ChannelRule {
  trace::CollType collective = trace::CollType::AllReduce;  // AllReduce, AllGather, ReduceScatter, Broadcast, Reduce
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max();
  std::uint32_t channels = 0;  // > 0
  friend bool operator==(const ChannelRule&, const ChannelRule&) = default;
};

// The count the first covering rule gives, or 0 (NCCL chooses). No allocation: the runtime
// calls it from NCCL's launch path.
std::uint32_t channelsFor(std::span<const ChannelRule> rules, trace::CollType collective, std::uint64_t bytes) noexcept;

// "AllReduce on 4 channels, AllGather on 2 channels": the rules in words.
std::string channelRulesText(std::span<const ChannelRule> rules);

// Whether NCCL's tuner plugin interface can set the channels of this kind of collective.
bool channelsSettable(trace::CollType collective) noexcept;

// The rules as NCCL's example tuner plugin reads them (its CSV: collective_type, min_bytes,
// max_bytes, algorithm, protocol, channels, nNodes, nRanks, numPipeOps, regBuff), with the
// algorithm and protocol NCCL's choice is left to, for the communicator size given. A header
// of comments says where the file came from.
std::string ncclTunerConf(std::span<const ChannelRule> rules, std::int32_t ranks, std::string_view source);

// A collective's transfer as the fit of its channels sees it: its channel count, the bytes its
// bus moved (nccl-tests' bus bytes), and its time less its communicator's latency.
struct ChannelSample {
  std::uint32_t channels = 0;
  double bus_bytes = 0;
  double transfer_ns = 0;
};

// The most one channel moves, fitted from collectives of one communicator on several counts: per
// count, the median bus bandwidth of its collectives of at least 1 MiB; counts below 90% of the
// fastest are taken to be channel-bound, and one channel moves the median of their bandwidth per
// channel. When every count reaches the fastest, one channel moves at least the fastest
// bandwidth over the fewest channels (`bounded_only`). Nullopt with fewer than two counts.
struct ChannelFit {
  double per_channel_bytes_per_ns = 0;
  bool bounded_only = false;
  std::vector<std::pair<std::uint32_t, double>> bandwidth_by_count;  // bus bytes per ns
};
std::optional<ChannelFit> fitChannels(std::span<const ChannelSample> samples);

// What a recording says of channels: the count NCCL's profiler plugin reported for each
// collective, and the most one channel moves, as NCCL told its tuner plugin.
struct RecordedChannels {
  std::vector<std::uint32_t> per_op;  // per op of the run model; 0: not reported
  std::uint32_t usual = 0;            // the count most collectives ran on; 0: none reported
  // Bus bytes per ns one channel moves at most (NCCL's per-channel ring bandwidth for the
  // device's generation and the job's node count); 0: not recorded.
  double per_channel_bytes_per_ns = 0;
  std::string per_channel_source;     // where that came from, in words
  // Per communicator whose collectives ran on several counts: what they show (WhatIfModel fits
  // it, and prefers it to NCCL's constant).
  std::vector<std::pair<std::int64_t, ChannelFit>> fitted;
};


// Reads them from the run's stores: each collective's nccl_ops row (by correlation id) and
// meta.nccl_per_channel_bandwidth (the smallest any rank noted). An imported run, or one
// recorded without NCCL's plugins, has none: every count 0.
trace::Result<RecordedChannels> readRecordedChannels(const analyzer::RunModel& model);

}  // namespace syncopate::tuner
