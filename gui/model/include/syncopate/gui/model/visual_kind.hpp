// What colour family an item of the timeline belongs to: the op classes the analyzer defines
// (compute, communication, memory, markers), host-side work (API calls, NCCL calls, blocking
// syncs) and annotation ranges. Views map each to a colour; the model only classifies.
#pragma once

#include <cstdint>
#include <string_view>

#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::gui {

enum class VisualKind : std::uint8_t {
  Compute = 0,
  Communication = 1,
  Memory = 2,
  Marker = 3,    // zero-length event record / stream wait
  Sync = 4,      // the host blocked on the GPU (a synchronising API call or host sync window)
  HostCall = 5,  // a CUDA runtime/driver API call
  NcclCall = 6,  // an NCCL API call on the host
  Range = 7,     // an NVTX / record_function range
};
inline constexpr std::size_t kVisualKinds = 8;

std::string_view toString(VisualKind k);
VisualKind visualKindOf(analyzer::OpClass c);

}  // namespace syncopate::gui
