#include "framework_trainer/zero_shards.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace framework_trainer {
namespace {

Bucket bucketOf(std::vector<int> params, std::vector<std::size_t> offsets, std::size_t numel) {
  return Bucket{std::move(params), std::move(offsets), numel};
}

TEST(ZeroShards, EachBucketIsPaddedToEqualShardsOnePerRank) {
  const std::vector<ShardedBucket> shards =
      shardBuckets({bucketOf({3, 2}, {0, 6}, 10), bucketOf({1, 0}, {0, 4}, 8)}, 4);
  ASSERT_EQ(shards.size(), 2u);
  // 10 elements on 4 ranks: shards of 3, 2 elements of padding.
  EXPECT_EQ(shards[0].shard_numel, 3u);
  EXPECT_EQ(shards[0].padded_numel, 12u);
  EXPECT_EQ(shards[0].shardOffset(0), 0u);
  EXPECT_EQ(shards[0].shardOffset(3), 9u);
  EXPECT_EQ(shards[0].bucket.params, (std::vector<int>{3, 2}));
  EXPECT_EQ(shards[0].bucket.offsets, (std::vector<std::size_t>{0, 6}));
  // 8 on 4: no padding.
  EXPECT_EQ(shards[1].shard_numel, 2u);
  EXPECT_EQ(shards[1].padded_numel, 8u);
  EXPECT_EQ(shardNumels(shards), (std::vector<std::int64_t>{3, 2}));
}

TEST(ZeroShards, OneRankOwnsTheWholeBucket) {
  const std::vector<ShardedBucket> shards = shardBuckets({bucketOf({0}, {0}, 7)}, 1);
  EXPECT_EQ(shards[0].shard_numel, 7u);
  EXPECT_EQ(shards[0].padded_numel, 7u);
}

TEST(ZeroShards, NoRanksIsAnError) { EXPECT_THROW(shardBuckets({bucketOf({0}, {0}, 7)}, 0), std::invalid_argument); }

}  // namespace
}  // namespace framework_trainer
