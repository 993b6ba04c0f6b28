// The time model of simgpu's collectives: alpha-beta costs over the profile's link levels.
//
// A ring collective over n ranks takes `steps` latency hops and moves `factor * bytes` over
// its slowest link (the ring passes through every link between consecutive ranks):
//
//   duration = steps * latency + factor * bytes * bytes_scale / bandwidth
//
//   kind            bytes (nccl-tests' "size")       steps     factor (nccl-tests' bus factor)
//   AllReduce       count * size                     2(n-1)    2(n-1)/n
//   ReduceScatter   n * recvcount * size             n-1       (n-1)/n
//   AllGather       n * sendcount * size             n-1       (n-1)/n
//   AlltoAll        n * count * size                 n-1       (n-1)/n
//   Gather/Scatter  n * count * size                 n-1       (n-1)/n
//   Broadcast       count * size                     n-1       1      (pipelined chain)
//   Reduce          count * size                     n-1       1      (pipelined chain)
//
// so that the bus bandwidth nccl-tests would report (bytes / duration * factor) approaches
// the link bandwidth for large messages. With the "tree" algorithm an all-reduce instead
// takes 2*ceil(log2 n) latency hops and moves `bytes` over the slowest link of any pair
// (a double binary tree); other collectives stay rings. Send/recv costs one hop of the
// pair's link: latency + bytes * bytes_scale / bandwidth. A communicator of one rank costs
// one intra-process latency.
//
// Channels (NCCL's CTAs): a collective on c channels moves at
// min(link bandwidth, c * per_channel_bandwidth), as NCCL models its bus bandwidth (channels
// times what one moves, capped by the link); its latency does not change. Without a channel
// model (per_channel_bandwidth 0) or without a count (c = 0), the link's full bandwidth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace simgpu::nccl {

struct LinkParams {
  double latency_ns = 0;  // per hop
  double bandwidth = 0;   // bytes per second, > 0
};

enum class LinkLevel : std::uint8_t { IntraProcess, IntraHost, InterHost };

struct LinkTable {
  LinkParams intra_process;
  LinkParams intra_host;
  LinkParams inter_host;
  const LinkParams& at(LinkLevel level) const;
};

enum class Algorithm : std::uint8_t { Ring, Tree };

struct CostParams {
  LinkTable links;
  double bytes_scale = 1.0;  // every byte a collective moves costs this many bytes
  Algorithm algorithm = Algorithm::Ring;
  double per_channel_bandwidth = 0;  // bytes per second one channel moves; 0: not modelled
};

// Where a rank lives: its OS process and its emulated host (rank / ranks_per_host).
struct RankPlace {
  std::int64_t process = 0;
  int host = 0;
};

LinkLevel linkLevel(const RankPlace& a, const RankPlace& b);

enum class CollKind : std::uint8_t {
  AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AlltoAll, Gather, Scatter
};

const char* collKindName(CollKind kind);  // NCCL's API name without the prefix: "AllReduce"

// nccl-tests' size of a collective, from the count argument of its NCCL call.
std::size_t collectiveBytes(CollKind kind, std::size_t count, std::size_t element_size, int nranks);
// nccl-tests' bus bandwidth factor.
double busBandwidthFactor(CollKind kind, int nranks);

// `ranks` lists the places of the communicator's ranks in rank (= ring) order; `channels` is
// the collective's channel count (0: the link's full bandwidth).
std::int64_t collectiveDurationNs(const CostParams& params, CollKind kind, std::size_t bytes,
                                  std::span<const RankPlace> ranks, int channels = 0);
std::int64_t p2pDurationNs(const CostParams& params, std::size_t bytes, LinkLevel level);

}  // namespace simgpu::nccl
