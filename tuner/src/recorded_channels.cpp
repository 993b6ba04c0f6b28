#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>

#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/trace/reader.hpp"
#include "syncopate/tuner/channels.hpp"

namespace syncopate::tuner {

trace::Result<RecordedChannels> readRecordedChannels(const analyzer::RunModel& model) {
  RecordedChannels out;
  out.per_op.assign(model.ops.size(), 0);
  std::map<std::uint32_t, std::size_t> counts;  // channels -> collectives
  for (const analyzer::RankInfo& rank : model.ranks) {
    if (rank.store_path.empty()) continue;
    auto reader = trace::StoreReader::open(rank.store_path, trace::TornStores::KeepRowsBefore);
    if (!reader.ok()) return trace::failure(std::string(reader.status().message()));
    if (auto noted = reader->metaValue("nccl_per_channel_bandwidth")) {
      double bytes_per_second = 0;
      const auto [end, error] = std::from_chars(noted->data(), noted->data() + noted->size(), bytes_per_second);
      if (error == std::errc() && end == noted->data() + noted->size() && bytes_per_second > 0) {
        const double per_ns = bytes_per_second / 1e9;
        if (out.per_channel_bytes_per_ns == 0 || per_ns < out.per_channel_bytes_per_ns) out.per_channel_bytes_per_ns = per_ns;
      }
    }
    // The rank's collective ops by their row in the store, then by correlation id.
    std::unordered_map<std::int64_t, analyzer::Index> op_of_row;
    for (analyzer::Index c = 0; c < model.collectives.size(); ++c) {
      const analyzer::Index op = model.collectives.op[c];
      if (op >= rank.first_op && op < rank.first_op + rank.op_count) op_of_row.emplace(model.ops.store_id[op], op);
    }
    if (op_of_row.empty()) continue;
    std::unordered_map<std::int64_t, analyzer::Index> op_of_correlation;
    if (auto st = reader->forEachOp([&](const trace::OpRow& row) {
          if (!row.correlation_id) return;
          if (auto it = op_of_row.find(row.id); it != op_of_row.end()) op_of_correlation.emplace(*row.correlation_id, it->second);
        });
        !st.ok()) {
      return trace::failure(std::string(st.message()));
    }
    if (auto st = reader->forEachNcclOp([&](const trace::NcclOpRow& row) {
          if (!row.channels || *row.channels == 0) return;
          if (auto it = op_of_correlation.find(row.correlation_id); it != op_of_correlation.end()) {
            out.per_op[it->second] = *row.channels;
            ++counts[*row.channels];
          }
        });
        !st.ok()) {
      return trace::failure(std::string(st.message()));
    }
  }
  if (!counts.empty()) {
    out.usual = std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  }
  if (out.per_channel_bytes_per_ns > 0) {
    out.per_channel_source = "NCCL's per-channel ring bandwidth, as NCCL told its tuner plugin (meta.nccl_per_channel_bandwidth)";
  }
  return out;
}

}  // namespace syncopate::tuner
