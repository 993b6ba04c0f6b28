// How the `syncopate` executable's allocator trades memory for page faults
// (cli/huge_page_allocations.cpp says why page faults matter).
#pragma once

#include <cstdint>
#include <filesystem>

namespace syncopate::cli {

// glibc keeps the memory a command frees and serves it again, from one heap advised as huge
// pages, instead of giving it back and faulting it in anew: page faults fall to a few thousand
// for an import or the analysis of a few hundred ranks (2x faster on 256), for up to a sixth
// more peak memory. Called by the commands whose work is that short.
void preferFewerPageFaults();

// The same, unless the run's stores add up to more than kSmallRunStoreBytes: the analysis of a
// large run is its model's columns, advised as huge pages anyway, and keeps glibc's own
// thresholds, which hold its peak memory lower.
inline constexpr std::uintmax_t kSmallRunStoreBytes = std::uintmax_t{1} << 30;
void preferFewerPageFaultsForRun(const std::filesystem::path& run_dir);

// SYNCOPATE_KEEP_FREED_MEMORY overrides the rule: 0 never (a node short of memory, or figures
// compared across run sizes in one mode), any other value always; unset, by the run's size.
enum class KeepFreedMemory { BySize, Never, Always };
KeepFreedMemory keepFreedMemory();

}  // namespace syncopate::cli
