#include "syncopate/tuner/free_memory.hpp"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "syncopate/trace/reader.hpp"

namespace syncopate::tuner {

namespace {

// The most bytes held at once by allocations given as (when, +bytes) and (when, -bytes): a free
// at the instant of an allocation is counted first, as the allocator could reuse it.
std::uint64_t peakHeld(std::vector<std::pair<std::int64_t, std::int64_t>>& changes) {
  std::sort(changes.begin(), changes.end());
  std::int64_t held = 0, peak = 0;
  for (const auto& [when, delta] : changes) {
    held += delta;
    peak = std::max(peak, held);
  }
  return static_cast<std::uint64_t>(peak);
}

}  // namespace

trace::Result<std::optional<FreeMemory>> recordedFreeMemory(const analyzer::RunModel& model) {
  std::optional<FreeMemory> least;
  for (const analyzer::RankInfo& rank : model.ranks) {
    if (rank.store_path.empty()) continue;
    auto reader = trace::StoreReader::open(rank.store_path, trace::TornStores::KeepRowsBefore);
    if (!reader.ok()) return trace::failure(std::string(reader.status().message()));
    std::uint64_t device_bytes = std::numeric_limits<std::uint64_t>::max();
    if (auto st = reader->forEachDevice([&](const trace::DeviceRow& d) {
          if (d.memory_bytes && *d.memory_bytes > 0) {
            device_bytes = std::min(device_bytes, static_cast<std::uint64_t>(*d.memory_bytes));
          }
        });
        !st.ok()) {
      return trace::failure(std::string(st.message()));
    }
    if (device_bytes == std::numeric_limits<std::uint64_t>::max()) continue;
    std::vector<std::pair<std::int64_t, std::int64_t>> changes;
    if (auto st = reader->forEachAllocation([&](const trace::AllocationRow& a) {
          if (!a.device_id || a.kind == trace::AllocKind::Pinned) return;
          const auto bytes = static_cast<std::int64_t>(std::min<std::uint64_t>(a.bytes, std::numeric_limits<std::int64_t>::max() / 4));
          changes.emplace_back(a.alloc_ns, bytes);
          if (a.free_ns) changes.emplace_back(*a.free_ns, -bytes);
        });
        !st.ok()) {
      return trace::failure(std::string(st.message()));
    }
    FreeMemory f;
    f.rank = rank.rank;
    f.device_bytes = device_bytes;
    f.peak_bytes = peakHeld(changes);
    f.bytes = f.device_bytes > f.peak_bytes ? f.device_bytes - f.peak_bytes : 0;
    if (!least || f.bytes < least->bytes) least = f;
  }
  return least;
}

}  // namespace syncopate::tuner
