// The collector as NCCL's profiler plugin (nccl_profiler.cpp): what the rest of the recorder
// needs to know of it.
#pragma once

#include <cstdint>

namespace syncopate::preload {

// How many communicator ranks NCCL has handed the plugin (its init calls) in this process: 0
// when NCCL never loaded it (not asked for, another plugin, or an NCCL without the interface).
std::uint64_t ncclProfilerRanks() noexcept;

}  // namespace syncopate::preload
