// NCCL's tuner plugin interface (plugin_abi/include/syncopate/plugin_abi/nccl_tuner_v5.h): the
// plugin named by NCCL_TUNER_PLUGIN, loaded once per process, initialised once per
// communicator rank and asked once per collective how many channels it runs on. simgpu keeps
// the profile's algorithm whatever the plugin does to the cost table (docs/simgpu-nccl.md,
// "The tuner plugin").
#pragma once

#include "simgpu/nccl/cost_model.hpp"
#include "syncopate/plugin_abi/nccl_tuner_v5.h"

#include <cstddef>
#include <span>

namespace simgpu::nccl {

struct CommKey;

// The plugin, or nullptr: none asked for, "none", or one that cannot be used (said once on
// stderr, as for the profiler plugin).
const ncclTuner_v5_t* tunerPlugin();

// Without a channel model in the profile, the plugin is still told what one channel moves: the
// link's bandwidth over this many channels.
inline constexpr int kFallbackChannels = 16;

// What the plugin is given of a communicator rank at init.
struct TunerComm {
  const CommKey* key = nullptr;
  std::span<const RankPlace> places;  // every rank's, in rank order
  const CostParams* cost = nullptr;
};

// One communicator rank's tuner context: what init returned (null: no plugin, or init failed).
struct RankTuner {
  void* context = nullptr;
};

RankTuner initTuner(const TunerComm& comm);
void finalizeTuner(RankTuner& tuner);

// The plugin's channel count for a collective about to be launched (> 0), or 0 when it leaves
// the choice, fails, is not there, or `kind` is no collective of the tuner (AlltoAll, Gather,
// Scatter). `channels` is the count it would otherwise run on, for the cost table's figures.
int tunerChannels(const RankTuner& tuner, const CostParams& cost, CollKind kind, std::size_t bytes,
                  std::span<const RankPlace> places, int channels, int num_pipe_ops);

}  // namespace simgpu::nccl
