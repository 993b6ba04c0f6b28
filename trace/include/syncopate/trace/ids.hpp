// Small integer ids that records and rows use instead of strings and handles. Every id is
// dense and store-local, handed out by the Catalog (catalog.hpp); 0 always means "none".
#pragma once

#include <cstdint>

namespace syncopate::trace {

using StringId = std::uint32_t;  // strings.id
using StreamId = std::uint32_t;  // streams.id
using ShapeId = std::uint32_t;   // a kernel's launch shape (name, grid, block); memory only
using EventId = std::uint32_t;   // identity of a cudaEvent_t within the store (ops.event_id)
using CommId = std::uint32_t;    // a communicator of this process (catalog index, memory only)
using ThreadId = std::uint32_t;  // threads.id

inline constexpr StringId kNoString = 0;
inline constexpr StreamId kNoStream = 0;
inline constexpr ShapeId kNoShape = 0;
inline constexpr EventId kNoEvent = 0;
inline constexpr CommId kNoComm = 0;
inline constexpr ThreadId kNoThread = 0;

// Grid or block dimensions of a kernel launch; all zero when not known.
struct Dim3 {
  std::uint32_t x = 0, y = 0, z = 0;
  constexpr bool known() const { return x != 0 || y != 0 || z != 0; }
  friend constexpr bool operator==(const Dim3&, const Dim3&) = default;
};

}  // namespace syncopate::trace
