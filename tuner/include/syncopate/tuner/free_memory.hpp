// What device memory a recorded run left free, for the default of `syncopate tune
// --memory-limit`: the runtime's fusion buffer must fit beside what the job itself holds.
#pragma once

#include <cstdint>
#include <optional>

#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/trace/status.hpp"

namespace syncopate::tuner {

struct FreeMemory {
  std::uint64_t bytes = 0;        // the least any rank left free
  std::int32_t rank = -1;         // that rank
  std::uint64_t device_bytes = 0; // its device's memory
  std::uint64_t peak_bytes = 0;   // the most it held at once
};

// Per rank: its device's memory less the most device memory its allocations held at once
// (cudaMalloc, cudaMallocAsync, cudaMallocManaged, ncclMemAlloc, as the store's `allocations`
// table has them; an allocation never freed is held to the end). The least over the ranks;
// nullopt when no store says how much memory its device has (an imported trace may not).
trace::Result<std::optional<FreeMemory>> recordedFreeMemory(const analyzer::RunModel& model);

}  // namespace syncopate::tuner
