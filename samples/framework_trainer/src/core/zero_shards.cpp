#include "framework_trainer/zero_shards.hpp"

#include <stdexcept>

namespace framework_trainer {

std::vector<ShardedBucket> shardBuckets(std::vector<Bucket> buckets, int world_size) {
  if (world_size < 1) throw std::invalid_argument("a sharded optimizer needs at least one rank");
  const auto ranks = static_cast<std::size_t>(world_size);
  std::vector<ShardedBucket> out;
  out.reserve(buckets.size());
  for (Bucket& b : buckets) {
    ShardedBucket& s = out.emplace_back();
    s.shard_numel = (b.numel + ranks - 1) / ranks;
    s.padded_numel = s.shard_numel * ranks;
    s.bucket = std::move(b);
  }
  return out;
}

std::vector<std::int64_t> shardNumels(const std::vector<ShardedBucket>& buckets) {
  std::vector<std::int64_t> out;
  out.reserve(buckets.size());
  for (const ShardedBucket& b : buckets) out.push_back(static_cast<std::int64_t>(b.shard_numel));
  return out;
}

}  // namespace framework_trainer
