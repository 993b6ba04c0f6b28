#include "dp_trainer/buckets.hpp"
#include "dp_trainer/llm_config.hpp"
#include "dp_trainer/op_counts.hpp"

#include <gtest/gtest.h>

namespace dp_trainer {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

TEST(Buckets, OneLayerPerBucketWhenALayerExceedsTheCap) {
  const ModelShape shape{24, 32, 8};
  const double layer_bytes = static_cast<double>(findLlmPreset("gpt-1.3b")->gradientBytesPerLayer());
  const std::vector<Bucket> buckets = planBuckets(shape, layer_bytes, 25 * kMiB);
  ASSERT_EQ(buckets.size(), 24u);
  EXPECT_EQ(buckets.front().first_layer, 23);
  EXPECT_EQ(buckets.back().first_layer, 0);
}

TEST(Buckets, CoverEveryParameterOnceInBackwardOrder) {
  const ModelShape shape{5, 4, 2};
  const std::vector<Bucket> buckets = planBuckets(shape, 10.0, 20.0);  // two layers fill a bucket
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].first_layer, 3);
  EXPECT_EQ(buckets[0].last_layer, 4);
  EXPECT_EQ(buckets[1].first_layer, 1);
  EXPECT_EQ(buckets[1].last_layer, 2);
  EXPECT_EQ(buckets[2].first_layer, 0);
  EXPECT_EQ(buckets[2].last_layer, 0);  // the remainder
  std::size_t end = shape.paramCount();
  for (const Bucket& b : buckets) {  // contiguous, descending, no gaps
    EXPECT_EQ(b.offset + b.count, end);
    EXPECT_EQ(b.offset, shape.layerOffset(b.first_layer));
    end = b.offset;
  }
  EXPECT_EQ(end, 0u);
  EXPECT_DOUBLE_EQ(buckets[0].modelled_bytes, 20.0);
  EXPECT_DOUBLE_EQ(buckets[2].modelled_bytes, 10.0);
}

TEST(Buckets, ALargeCapMakesOneBucket) {
  const ModelShape shape{6, 4, 2};
  const std::vector<Bucket> buckets = planBuckets(shape, 1.0, 1e9);
  ASSERT_EQ(buckets.size(), 1u);
  EXPECT_EQ(buckets[0].offset, 0u);
  EXPECT_EQ(buckets[0].count, shape.paramCount());
}

TEST(Buckets, RefuseANonPositiveCap) { EXPECT_THROW(planBuckets(ModelShape{2, 4, 2}, 1.0, 0.0), std::invalid_argument); }

TEST(OpCounts, PerIterationFormula) {
  const ModelShape shape{24, 32, 8};
  const OpCounts naive = iterationOpCounts(shape, SyncMode::Naive, 7);
  EXPECT_EQ(naive, (OpCounts{.kernels = 96, .memcpys = 4, .memsets = 1, .collectives = 24}));
  const OpCounts overlap = iterationOpCounts(shape, SyncMode::Overlap, 7);
  EXPECT_EQ(overlap.collectives, 7u);
  EXPECT_EQ(overlap.kernels, 96u);
  EXPECT_EQ(setupOpCounts(), (OpCounts{.kernels = 0, .memcpys = 1, .memsets = 0, .collectives = 1}));
  OpCounts total = setupOpCounts();
  total += naive * 3;
  EXPECT_EQ(total.kernels, 288u);
  EXPECT_EQ(total.memcpys, 13u);
  EXPECT_EQ(total - setupOpCounts(), naive * 3);
}

TEST(LlmConfig, PresetArithmetic) {
  const LlmConfig c = *findLlmPreset("gpt-1.3b");
  EXPECT_EQ(c.layers, 24);
  EXPECT_EQ(c.tokens(), 4096);
  EXPECT_EQ(c.paramsPerLayer(), 12LL * 2048 * 2048);
  EXPECT_EQ(c.gradientBytesPerLayer(), 100663296);
  EXPECT_DOUBLE_EQ(c.forwardFlopsPerLayer(), 2.0 * 4096 * 12 * 2048.0 * 2048.0);
  EXPECT_FALSE(findLlmPreset("gpt-9t"));
  EXPECT_NE(llmPresetNames().find("gpt-125m"), std::string::npos);
}

TEST(LlmConfig, RefusesSizesThatDoNotFitAKernelInt) {
  LlmConfig c = *findLlmPreset("gpt-125m");
  EXPECT_EQ(validateLlmConfig(c), "");
  c.micro_batch = 2'000'000;
  EXPECT_NE(validateLlmConfig(c).find("tokens"), std::string::npos);
  c = *findLlmPreset("gpt-125m");
  c.hidden = 400'000'000;
  EXPECT_NE(validateLlmConfig(c).find("hidden"), std::string::npos);
  c.hidden = 0;
  EXPECT_NE(validateLlmConfig(c), "");
}

}  // namespace
}  // namespace dp_trainer
