#include "framework_trainer/ddp_buckets.hpp"
#include "framework_trainer/model_config.hpp"

#include <gtest/gtest.h>

#include <set>

namespace framework_trainer {
namespace {

constexpr std::size_t kMebibyte = std::size_t{1} << 20;

TEST(DdpBuckets, ReverseOrderFirstBucketSmallThenTheCap) {
  // Parameters of 0.5, 0.75, 2, 3, 1 and 1 MiB, registered in this order.
  const std::vector<std::size_t> bytes{kMebibyte / 2, 3 * kMebibyte / 4, 2 * kMebibyte, 3 * kMebibyte, kMebibyte, kMebibyte};
  const std::vector<Bucket> buckets = assignBuckets(bytes, 4 * kMebibyte);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].params, (std::vector<int>{5}));  // 1 MiB: the first bucket is full
  EXPECT_EQ(buckets[1].params, (std::vector<int>{4, 3}));  // 4 MiB
  EXPECT_EQ(buckets[2].params, (std::vector<int>{2, 1, 0}));  // what is left
  EXPECT_EQ(buckets[1].offsets, (std::vector<std::size_t>{0, kMebibyte / 4}));
  EXPECT_EQ(buckets[2].numel, (2 * kMebibyte + 3 * kMebibyte / 4 + kMebibyte / 2) / 4);
}

// bucket_cap_mb given: DDP cuts the first bucket at the cap too.
TEST(DdpBuckets, TheFirstBucketAtTheCap) {
  const std::vector<std::size_t> bytes{kMebibyte / 2, 3 * kMebibyte / 4, 2 * kMebibyte, 3 * kMebibyte, kMebibyte, kMebibyte};
  const std::vector<Bucket> buckets = assignBuckets(bytes, 4 * kMebibyte, 4 * kMebibyte);
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].params, (std::vector<int>{5, 4, 3}));  // 5 MiB: closed at 4 MiB or more
  EXPECT_EQ(buckets[1].params, (std::vector<int>{2, 1, 0}));  // what is left
}

TEST(DdpBuckets, ByElementsAsMegatronNoSmallerFirstBucket) {
  // Parameters of 100, 300, 50, 400 and 200 elements, registered in this order; buckets of 500.
  const std::vector<Bucket> buckets = assignBucketsByElements({100, 300, 50, 400, 200}, 500);
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].params, (std::vector<int>{4, 3}));  // 600: closed at 500 or more
  EXPECT_EQ(buckets[0].offsets, (std::vector<std::size_t>{0, 200}));
  EXPECT_EQ(buckets[1].params, (std::vector<int>{2, 1, 0}));  // what is left
  EXPECT_EQ(buckets[1].numel, 450u);
}

TEST(DdpBuckets, Gpt2SmallSizedAt25MiB) {
  const ParamLayout layout(*findModelPreset("gpt2-small-8k"));
  std::vector<std::size_t> bytes;
  for (const ParamSpec& p : layout.params()) bytes.push_back(p.bytes());
  const std::vector<Bucket> buckets = assignBuckets(bytes, 25 * kMebibyte);
  std::set<int> seen;
  std::size_t numel = 0;
  for (const Bucket& b : buckets) {
    for (int p : b.params) EXPECT_TRUE(seen.insert(p).second) << p;
    numel += b.numel;
  }
  EXPECT_EQ(seen.size(), bytes.size());
  EXPECT_EQ(numel, static_cast<std::size_t>(layout.totalNumel()));
  EXPECT_EQ(buckets.size(), 17u);
  // The token embedding, registered first, is reduced last.
  EXPECT_EQ(buckets.back().params.back(), layout.tokenEmbedding());
}

}  // namespace
}  // namespace framework_trainer
