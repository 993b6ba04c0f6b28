#include <charconv>
#include <set>

#include <fmt/format.h>

#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/trace/reader.hpp"
#include "syncopate/tuner/work_queues.hpp"

namespace syncopate::tuner {

std::optional<std::uint32_t> connectionsCudaTakes(std::string_view value) noexcept {
  std::uint32_t count = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), count);
  if (error != std::errc() || end != value.data() + value.size() || count < 1 || count > kCudaMostConnections) {
    return std::nullopt;
  }
  return count;
}

trace::Result<RecordedConnections> readRecordedConnections(const analyzer::RunModel& model) {
  RecordedConnections out;
  std::set<std::uint32_t> seen;
  for (const analyzer::RankInfo& rank : model.ranks) {
    if (rank.store_path.empty()) continue;
    auto reader = trace::StoreReader::open(rank.store_path, trace::TornStores::KeepRowsBefore);
    if (!reader.ok()) return trace::failure(std::string(reader.status().message()));
    const auto noted = reader->metaValue("cuda_device_max_connections");
    if (!noted) continue;
    const std::optional<std::uint32_t> value = connectionsCudaTakes(*noted);
    if (!value) {
      out.note = fmt::format("rank {} ran with CUDA_DEVICE_MAX_CONNECTIONS={}, not a count of 1 to {}: taken as CUDA's "
                             "default, {}",
                             rank.rank, *noted, kCudaMostConnections, kCudaDefaultConnections);
      continue;
    }
    seen.insert(*value);
  }
  if (seen.empty()) return out;
  out.set = true;
  out.connections = *seen.begin();
  if (seen.size() > 1) {
    out.note = fmt::format("the ranks ran with CUDA_DEVICE_MAX_CONNECTIONS from {} to {}: modelled with {}", *seen.begin(),
                           *seen.rbegin(), *seen.begin());
  }
  return out;
}

}  // namespace syncopate::tuner
