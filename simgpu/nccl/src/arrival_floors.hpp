// The arrival floors of this process's ranks (RankRecord::arrival_floor_ns): while a peer waits
// for one of them to arrive at a collective and asks, a thread of the process publishes how
// early that rank's next collective on the communicator could start, as the device's scheduler
// bounds it (simgpu::peerGroupStartBound), and rings the peers. A rank whose host and streams
// are all held up, directly or through its peers, by the very collective the peer waits in then
// still tells it enough to go on (docs/simgpu.md, "Peers that wait for each other").
#pragma once

#include "simgpu/nccl/endpoint.hpp"

#include <cstdint>

namespace simgpu::nccl {

class CommState;

// The peer group that the stream ops of a communicator rank carry (simgpu::StreamOp::peer_group),
// known from the call on, before the rank may have joined.
inline std::uint64_t peerGroupOf(const CommState& comm) { return reinterpret_cast<std::uintptr_t>(&comm); }

// From when a rank joined its communicator until it leaves it (before its endpoint goes).
void publishArrivalFloors(Endpoint& endpoint, int device, std::uint64_t peer_group);
void stopPublishingArrivalFloors(const Endpoint& endpoint);

}  // namespace simgpu::nccl
