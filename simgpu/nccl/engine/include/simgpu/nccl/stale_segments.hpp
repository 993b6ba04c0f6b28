// Clean-up of segments left by jobs that died. A communicator's segment name is unlinked as
// soon as all its ranks have mapped it, so the memory goes away with the last rank even when
// ranks are killed; only communicators whose ranks died while joining leave a name behind.
#pragma once

#include <cstdint>
#include <string>

namespace simgpu::nccl {

// Unlinks every simgpu communicator segment in `directory` (the shm_open namespace,
// /dev/shm on Linux) none of whose ranks is alive, if it is older than min_age_ns (so a
// segment being created right now is left alone). Returns how many it removed.
int removeStaleSegments(const std::string& directory, std::int64_t min_age_ns);

}  // namespace simgpu::nccl
