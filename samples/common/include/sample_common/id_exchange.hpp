// The torchrun-style bootstrap's one job: hand NCCL's unique id from rank 0 to every other
// rank over TCP (rank 0 listens on MASTER_PORT; the others connect to MASTER_ADDR). Each
// client announces its rank and the world size, so that a stray or mis-launched process is
// refused with a message instead of joining the wrong job. Bounded by a timeout everywhere:
// a missing rank is an error, never a hang.
#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace sample_common {

// Rank 0: accepts world_size - 1 distinct ranks and sends each `id`. Throws std::runtime_error.
void serveUniqueId(int port, int world_size, std::span<const std::byte> id, std::chrono::milliseconds timeout);

// Ranks 1..world_size-1: connects (retrying while rank 0 is not listening yet) and returns
// the id of `id_size` bytes. Throws std::runtime_error.
std::vector<std::byte> fetchUniqueId(const std::string& address, int port, int rank, int world_size,
                                     std::size_t id_size, std::chrono::milliseconds timeout);

}  // namespace sample_common
