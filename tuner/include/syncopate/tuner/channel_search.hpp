// The search over NCCL channel counts (docs/tuner.md, "Channels"): on top of a schedule (the
// recommended one, or the recorded one), each kind of collective the run issues, in each size
// class (under 1 MiB, 1 to 16 MiB, 16 MiB and more), is predicted on fewer channels than it
// was recorded with, one count at a time, all side by side; the best count of each kind and
// class that gains is kept (neighbouring classes with one count become one rule), and the kept
// counts are predicted together.
// Fewer channels take fewer SMs from the compute they overlap (the model's interference
// weight) and, below what saturates the link, move bytes more slowly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncopate/tuner/channels.hpp"
#include "syncopate/tuner/schedule_rules.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace syncopate::tuner {

struct ChannelCandidate {
  ChannelRule rule;
  double predicted_iteration_ms = 0;
  double gain = 0;  // 1 - predicted / the schedule's own prediction
};

struct ChannelSearch {
  bool searched = false;
  std::string why_not;                    // when not searched, in one sentence
  std::uint32_t recorded_channels = 0;    // the count most collectives ran on
  double per_channel_bytes_per_ns = 0;
  std::string per_channel_source;
  std::vector<std::pair<std::int64_t, ChannelFit>> fitted;  // communicators that showed several counts
  double schedule_ms = 0;                 // the schedule alone
  std::vector<ChannelCandidate> candidates;
  std::vector<ChannelRule> chosen;        // empty: no count gains enough
  double predicted_iteration_ms = 0;      // the schedule with the chosen counts
  double gain = 0;                        // 1 - predicted / schedule_ms
};

// A kind's count is kept when it gains at least `min_gain` over the schedule alone.
ChannelSearch searchChannels(const WhatIfModel& model, const ScheduleRules* schedule, double min_gain);

// NCCL_MAX_CTAS=c, the setting a user applies without Syncopate: every collective NCCL's tuner
// interface covers on at most c channels, on the recorded schedule. Per count below the recorded
// one: (c, predicted step in ns); a count whose prediction failed is left out. Empty when
// channels cannot be predicted (searchChannels' why_not says why).
std::vector<std::pair<std::uint32_t, double>> predictMaxCtas(const WhatIfModel& model);

}  // namespace syncopate::tuner
