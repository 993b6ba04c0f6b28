#include "framework_trainer/fsdp_units.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace framework_trainer {
namespace {

TEST(FsdpUnits, TheRootThenOneUnitPerBlockEachParameterOnce) {
  const ModelConfig c = *findModelPreset("tiny");
  const ParamLayout layout(c);
  const std::vector<ShardedBucket> units = fsdpUnits(c, 4);
  ASSERT_EQ(units.size(), static_cast<std::size_t>(c.layers) + 1);
  // The root: the embeddings (the token embedding is the tied LM head too) and ln_f.
  EXPECT_EQ(units[kRootUnit].bucket.params,
            (std::vector<int>{layout.tokenEmbedding(), layout.positionEmbedding(), layout.finalNormWeight(),
                              layout.finalNormBias()}));
  const BlockParams& b1 = layout.block(1);
  EXPECT_EQ(units[static_cast<std::size_t>(blockUnit(1))].bucket.params.front(), b1.ln1_weight);
  EXPECT_EQ(units[static_cast<std::size_t>(blockUnit(1))].bucket.params.back(), b1.mlp_proj_bias);

  std::vector<int> seen(static_cast<std::size_t>(layout.size()), 0);
  for (const ShardedBucket& u : units) {
    std::size_t offset = 0;
    for (std::size_t i = 0; i < u.bucket.params.size(); ++i) {
      // Each tensor right after the previous one in the unit's flat buffer.
      EXPECT_EQ(u.bucket.offsets[i], offset);
      offset += static_cast<std::size_t>(layout[u.bucket.params[i]].numel());
      ++seen[static_cast<std::size_t>(u.bucket.params[i])];
    }
    EXPECT_EQ(u.bucket.numel, offset);
    EXPECT_EQ(u.padded_numel, 4 * u.shard_numel);
    EXPECT_GE(u.padded_numel, u.bucket.numel);
  }
  EXPECT_EQ(seen, std::vector<int>(seen.size(), 1));
}

TEST(FsdpUnits, PaddedToEqualShards) {
  const ModelConfig c = *findModelPreset("tiny");
  // tiny's root (82176 elements) and blocks (198272) divide by 4 ranks; on 3 the blocks need
  // padding: 198272 = 3 * 66091 - 1.
  EXPECT_EQ(paddedUnits(fsdpUnits(c, 4)), 0);
  const std::vector<ShardedBucket> three = fsdpUnits(c, 3);
  EXPECT_EQ(paddedUnits(three), c.layers);
  EXPECT_EQ(three[static_cast<std::size_t>(blockUnit(0))].shard_numel, 66091u);
  EXPECT_EQ(three[kRootUnit].padded_numel, three[kRootUnit].bucket.numel);
}

}  // namespace
}  // namespace framework_trainer
