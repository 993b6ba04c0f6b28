#include "simgpu/nccl/cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace simgpu::nccl {
namespace {

double transferNs(const CostParams& params, double bytes, const LinkParams& link) {
  return bytes * params.bytes_scale / link.bandwidth * 1e9;
}

// The link a collective on `channels` sees: its own bandwidth, or what the channels move when
// that is less. Unchanged (the same double) whenever the channels saturate the link.
LinkParams onChannels(const CostParams& params, const LinkParams& link, int channels) {
  if (params.per_channel_bandwidth <= 0 || channels <= 0) return link;
  return LinkParams{link.latency_ns, std::min(link.bandwidth, channels * params.per_channel_bandwidth)};
}

// The slowest link a ring over `ranks` crosses (levels are ordered slowest last).
LinkLevel ringLevel(std::span<const RankPlace> ranks) {
  LinkLevel worst = LinkLevel::IntraProcess;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    worst = std::max(worst, linkLevel(ranks[i], ranks[(i + 1) % ranks.size()]));
  }
  return worst;
}

// The slowest link between any two ranks: a tree may connect any of them.
LinkLevel anyPairLevel(std::span<const RankPlace> ranks) {
  const RankPlace& first = ranks.front();
  const bool one_host = std::all_of(ranks.begin(), ranks.end(), [&](const RankPlace& r) { return r.host == first.host; });
  if (!one_host) return LinkLevel::InterHost;
  const bool one_process = std::all_of(ranks.begin(), ranks.end(), [&](const RankPlace& r) { return r.process == first.process; });
  return one_process ? LinkLevel::IntraProcess : LinkLevel::IntraHost;
}

int ringSteps(CollKind kind, int n) { return kind == CollKind::AllReduce ? 2 * (n - 1) : n - 1; }

}  // namespace

const LinkParams& LinkTable::at(LinkLevel level) const {
  switch (level) {
    case LinkLevel::IntraProcess: return intra_process;
    case LinkLevel::IntraHost: return intra_host;
    case LinkLevel::InterHost: return inter_host;
  }
  return inter_host;
}

LinkLevel linkLevel(const RankPlace& a, const RankPlace& b) {
  if (a.host != b.host) return LinkLevel::InterHost;
  if (a.process != b.process) return LinkLevel::IntraHost;
  return LinkLevel::IntraProcess;
}

const char* collKindName(CollKind kind) {
  switch (kind) {
    case CollKind::AllReduce: return "AllReduce";
    case CollKind::Broadcast: return "Broadcast";
    case CollKind::Reduce: return "Reduce";
    case CollKind::AllGather: return "AllGather";
    case CollKind::ReduceScatter: return "ReduceScatter";
    case CollKind::AlltoAll: return "AlltoAll";
    case CollKind::Gather: return "Gather";
    case CollKind::Scatter: return "Scatter";
  }
  return "invalid";
}

std::size_t collectiveBytes(CollKind kind, std::size_t count, std::size_t element_size, int nranks) {
  const std::size_t per_rank = count * element_size;
  switch (kind) {
    case CollKind::AllReduce:
    case CollKind::Broadcast:
    case CollKind::Reduce:
      return per_rank;
    case CollKind::AllGather:
    case CollKind::ReduceScatter:
    case CollKind::AlltoAll:
    case CollKind::Gather:
    case CollKind::Scatter:
      return per_rank * static_cast<std::size_t>(nranks);
  }
  return per_rank;
}

double busBandwidthFactor(CollKind kind, int nranks) {
  const double n = nranks;
  switch (kind) {
    case CollKind::AllReduce: return 2.0 * (n - 1) / n;
    case CollKind::Broadcast:
    case CollKind::Reduce: return 1.0;
    case CollKind::AllGather:
    case CollKind::ReduceScatter:
    case CollKind::AlltoAll:
    case CollKind::Gather:
    case CollKind::Scatter: return (n - 1) / n;
  }
  return 1.0;
}

std::int64_t collectiveDurationNs(const CostParams& params, CollKind kind, std::size_t bytes,
                                  std::span<const RankPlace> ranks, int channels) {
  const int n = static_cast<int>(ranks.size());
  if (n <= 1) return std::llround(params.links.intra_process.latency_ns);
  if (kind == CollKind::AllReduce && params.algorithm == Algorithm::Tree) {
    const LinkParams link = onChannels(params, params.links.at(anyPairLevel(ranks)), channels);
    const double depth = std::ceil(std::log2(static_cast<double>(n)));
    return std::llround(2.0 * depth * link.latency_ns + transferNs(params, static_cast<double>(bytes), link));
  }
  const LinkParams link = onChannels(params, params.links.at(ringLevel(ranks)), channels);
  const double moved = busBandwidthFactor(kind, n) * static_cast<double>(bytes);
  return std::llround(ringSteps(kind, n) * link.latency_ns + transferNs(params, moved, link));
}

std::int64_t p2pDurationNs(const CostParams& params, std::size_t bytes, LinkLevel level) {
  const LinkParams& link = params.links.at(level);
  return std::llround(link.latency_ns + transferNs(params, static_cast<double>(bytes), link));
}

}  // namespace simgpu::nccl
