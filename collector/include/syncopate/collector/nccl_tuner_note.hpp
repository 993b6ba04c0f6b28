// What NCCL tells its tuner plugin that the recording keeps: the most one channel of a ring
// moves, which the tuner's model needs to predict a collective on fewer channels
// (docs/tuner.md, "Channels"). The preload library's tuner plugin (preload/nccl_tuner_plugin.cpp)
// hands each communicator's constants here; the recorder's background thread writes them to
// the store's meta table.
#pragma once

#include <cstddef>

#include "syncopate/plugin_abi/nccl_tuner_v5.h"

namespace syncopate::preload {

// Called from NCCL's communicator initialisation, on the thread that creates it (its device
// current). Keeps the per-channel ring bandwidth for the device's generation at this
// communicator's node scale; of several communicators, the one with the most nodes wins.
void noteNcclTunerInit(std::size_t nodes, const ncclTunerConstants_v5_t& constants) noexcept;

// Bytes per second one ring channel moves at most, as noted; 0 before any communicator. With the
// node count of the communicator it came from.
struct NcclChannelBandwidth {
  double bytes_per_second = 0;
  std::size_t nodes = 0;
};
NcclChannelBandwidth notedChannelBandwidth() noexcept;

}  // namespace syncopate::preload
