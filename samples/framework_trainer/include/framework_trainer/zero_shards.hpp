// ZeRO stage 1's partition of the optimizer's work (DeepSpeed's stage 1, Megatron's distributed
// optimizer): parameters and gradients are laid out in flat buckets assigned as DDP assigns them
// (ddp_buckets.hpp), one parameter and one gradient buffer per bucket, each tensor at its
// bucket offset; each bucket is padded to a multiple of the world size and cut into equal
// contiguous shards, rank r owning shard r. An in-place reduce-scatter leaves each rank its
// shard of the averaged gradients; the rank steps only the parameters of its shard; an
// in-place all-gather gives every rank every updated parameter again.
#pragma once

#include "framework_trainer/ddp_buckets.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace framework_trainer {

struct ShardedBucket {
  Bucket bucket;
  std::size_t shard_numel = 0;   // each rank's shard, elements
  std::size_t padded_numel = 0;  // shard_numel * world size >= bucket.numel

  std::size_t shardOffset(int rank) const { return static_cast<std::size_t>(rank) * shard_numel; }
};

std::vector<ShardedBucket> shardBuckets(std::vector<Bucket> buckets, int world_size);

// Each bucket's shard size, in bucket order: the tensors of the sharded optimizer step.
std::vector<std::int64_t> shardNumels(const std::vector<ShardedBucket>& buckets);

}  // namespace framework_trainer
