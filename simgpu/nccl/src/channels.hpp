// How many NCCL channels (CTAs, hence SMs) a collective runs on: the profile's default, bounded
// by NCCL_MIN_CTAS/NCCL_MAX_CTAS, then replaced by the tuner plugin's choice if it makes one
// (docs/simgpu-nccl.md, "Channels").
#pragma once

#include "simgpu/core/profile.hpp"

#include <optional>

namespace simgpu::nccl {

// A communicator's channels, fixed when it is made. All zero when the profile models none: a
// collective then runs on the link's full bandwidth and is reported on one channel, as before
// the profile had channels.
struct ChannelPlan {
  int default_count = 0;    // the profile's default within NCCL_MIN_CTAS..NCCL_MAX_CTAS
  int max_count = 0;        // the profile's max: what a communicator has
  int profile_default = 0;  // the profile's own default: interference weights are relative to it
};

// NCCL_MIN_CTAS and NCCL_MAX_CTAS are read once per process, as NCCL reads its environment.
ChannelPlan channelPlan(const std::optional<simgpu::Profile::Channels>& channels);

// The count a collective runs on, given what the tuner plugin chose (<= 0: no choice). 0 when
// the plan models no channels.
int chosenChannels(const ChannelPlan& plan, int tuner_choice);
// The interference weight of a collective on `channels` (StreamOp::interference_weight).
double interferenceWeight(const ChannelPlan& plan, int channels);
// nChannels as the profiler plugin reports it.
inline int reportedChannels(int channels) { return channels > 0 ? channels : 1; }

}  // namespace simgpu::nccl
