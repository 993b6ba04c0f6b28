#include "framework_trainer/model_config.hpp"

#include <gtest/gtest.h>

namespace framework_trainer {
namespace {

TEST(ModelConfig, Gpt2SmallHasItsPublishedParameterCount) {
  const ModelConfig c = *findModelPreset("gpt2-small");
  const ParamLayout layout(c);
  EXPECT_EQ(layout.totalNumel(), 124'439'808);
  EXPECT_EQ(layout.size(), 4 + 12 * c.layers);
  EXPECT_EQ(layout[0].name, "wte.weight");
  EXPECT_EQ(layout[0].numel(), 50257 * 768);
  EXPECT_EQ(layout[1].name, "wpe.weight");
  EXPECT_EQ(layout[layout.size() - 1].name, "ln_f.bias");
}

TEST(ModelConfig, TheDemoConfigurationIsGpt2SmallSized) {
  const ParamLayout layout(*findModelPreset("gpt2-small-8k"));
  EXPECT_EQ(layout.totalNumel(), 120'485'376);
  EXPECT_EQ(layout.size(), 196);
  EXPECT_EQ(layout.totalBytes(), 481'941'504u);
}

TEST(ModelConfig, BlocksInRegistrationOrder) {
  const ModelConfig c = *findModelPreset("tiny");
  const ParamLayout layout(c);
  EXPECT_EQ(layout.totalNumel(), 478'720);
  const BlockParams& b = layout.block(1);
  EXPECT_EQ(layout[b.ln1_weight].name, "h.1.ln_1.weight");
  EXPECT_EQ(b.ln1_bias, b.ln1_weight + 1);
  EXPECT_EQ(layout[b.attn_weight].name, "h.1.attn.c_attn.weight");
  EXPECT_EQ(layout[b.attn_weight].rows, 128);
  EXPECT_EQ(layout[b.attn_weight].cols, 384);
  EXPECT_EQ(layout[b.mlp_proj_weight].rows, 512);
  EXPECT_EQ(layout[b.mlp_proj_bias].name, "h.1.mlp.c_proj.bias");
  EXPECT_EQ(b.ln1_weight, 2 + 12);
  EXPECT_EQ(layout.finalNormWeight(), 2 + 12 * 2);
  EXPECT_EQ(layout[layout.finalNormWeight()].role, ParamRole::NormWeight);
}

TEST(ModelConfig, RefusesWhatCannotBeBuilt) {
  ModelConfig c = *findModelPreset("tiny");
  EXPECT_EQ(validateModelConfig(c), "");
  c.heads = 3;
  EXPECT_NE(validateModelConfig(c).find("multiple of the heads"), std::string::npos);
  c = *findModelPreset("tiny");
  c.vocab = 0;
  EXPECT_NE(validateModelConfig(c).find("at least 1"), std::string::npos);
  c = *findModelPreset("tiny");
  c.vocab = 1 << 22;
  c.hidden = 1 << 10;
  c.heads = 1;
  EXPECT_NE(validateModelConfig(c).find("too large"), std::string::npos);
  EXPECT_FALSE(findModelPreset("gpt-5"));
  EXPECT_EQ(modelPresetNames(), "gpt2-small, gpt2-small-8k, tiny");
}

}  // namespace
}  // namespace framework_trainer
