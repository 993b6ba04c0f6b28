// The host memory a command may use: what the kernel says this machine can give without swapping
// (/proc/meminfo's MemAvailable), or, when the command runs in a control group with a memory
// limit (a container, a batch job's allocation), the smallest headroom of its group and the
// group's ancestors (the limit less what the group uses, reclaimable page cache not counted),
// whichever is smaller. cgroup v2 and v1's memory controller are read. `analyze` takes a share of
// it as its default --memory-limit.
#pragma once

#include <cstdint>
#include <optional>

namespace syncopate::cli {

// nullopt when no source can be read.
std::optional<std::uint64_t> availableHostMemory();

}  // namespace syncopate::cli
