// The host memory a command may use: what the kernel says this machine can give without swapping
// (/proc/meminfo's MemAvailable), or, when the command runs in a control group with a memory
// limit (a container, a batch job's allocation), that limit less what the group already uses,
// whichever is smaller. `analyze` takes a share of it as its default --memory-limit.
#pragma once

#include <cstdint>
#include <optional>

namespace syncopate::cli {

// nullopt when neither source can be read.
std::optional<std::uint64_t> availableHostMemory();

}  // namespace syncopate::cli
