#include "framework_trainer/model_config.hpp"

#include <fmt/format.h>

#include <limits>

namespace framework_trainer {

const std::vector<ModelConfig>& modelPresets() {
  static const std::vector<ModelConfig> presets{
      // GPT-2 small as published: 124.4 M parameters, 31% of them in the tied token embedding.
      {"gpt2-small", 12, 768, 12, 50257, 1024, 16},
      // GPT-2 small's blocks with a smaller vocabulary and more depth: 120.5 M parameters, 5% in
      // the token embedding (docs/framework_trainer.md, "The model", says why the demo uses it).
      {"gpt2-small-8k", 16, 768, 12, 8192, 1024, 16},
      // Small enough for tests: 0.48 M parameters.
      {"tiny", 2, 128, 4, 512, 128, 2},
  };
  return presets;
}

std::optional<ModelConfig> findModelPreset(const std::string& name) {
  for (const ModelConfig& c : modelPresets())
    if (c.name == name) return c;
  return std::nullopt;
}

std::string modelPresetNames() {
  std::string names;
  for (const ModelConfig& c : modelPresets()) names += (names.empty() ? "" : ", ") + c.name;
  return names;
}

std::string validateModelConfig(const ModelConfig& c) {
  if (c.layers < 1 || c.hidden < 1 || c.heads < 1 || c.vocab < 1 || c.seq_len < 1 || c.micro_batch < 1) {
    return "layers, hidden size, heads, vocabulary, sequence length and micro-batch must all be at least 1";
  }
  if (c.hidden % c.heads != 0) {
    return fmt::format("the hidden size ({}) must be a multiple of the heads ({})", c.hidden, c.heads);
  }
  // Kernel cost parameters and element counts are 32-bit on the device side.
  const std::int64_t widest = static_cast<std::int64_t>(c.vocab) * c.hidden;
  if (widest > std::numeric_limits<int>::max() || c.tokens() > std::numeric_limits<int>::max()) {
    return "the configuration is too large: a tensor or the tokens per step exceed 2^31 elements";
  }
  return {};
}

ParamLayout::ParamLayout(const ModelConfig& c) {
  const std::int64_t d = c.hidden;
  const auto add = [&](std::string name, ParamRole role, std::int64_t rows, std::int64_t cols) {
    params_.push_back({std::move(name), role, rows, cols});
    return static_cast<int>(params_.size()) - 1;
  };
  add("wte.weight", ParamRole::TokenEmbedding, c.vocab, d);
  add("wpe.weight", ParamRole::PositionEmbedding, c.seq_len, d);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = fmt::format("h.{}.", l);
    BlockParams b{};
    b.ln1_weight = add(p + "ln_1.weight", ParamRole::NormWeight, d, 1);
    b.ln1_bias = add(p + "ln_1.bias", ParamRole::NormBias, d, 1);
    b.attn_weight = add(p + "attn.c_attn.weight", ParamRole::LinearWeight, d, 3 * d);
    b.attn_bias = add(p + "attn.c_attn.bias", ParamRole::LinearBias, 3 * d, 1);
    b.attn_proj_weight = add(p + "attn.c_proj.weight", ParamRole::LinearWeight, d, d);
    b.attn_proj_bias = add(p + "attn.c_proj.bias", ParamRole::LinearBias, d, 1);
    b.ln2_weight = add(p + "ln_2.weight", ParamRole::NormWeight, d, 1);
    b.ln2_bias = add(p + "ln_2.bias", ParamRole::NormBias, d, 1);
    b.fc_weight = add(p + "mlp.c_fc.weight", ParamRole::LinearWeight, d, 4 * d);
    b.fc_bias = add(p + "mlp.c_fc.bias", ParamRole::LinearBias, 4 * d, 1);
    b.mlp_proj_weight = add(p + "mlp.c_proj.weight", ParamRole::LinearWeight, 4 * d, d);
    b.mlp_proj_bias = add(p + "mlp.c_proj.bias", ParamRole::LinearBias, d, 1);
    blocks_.push_back(b);
  }
  final_norm_weight_ = add("ln_f.weight", ParamRole::NormWeight, d, 1);
  add("ln_f.bias", ParamRole::NormBias, d, 1);
}

std::int64_t ParamLayout::totalNumel() const {
  std::int64_t total = 0;
  for (const ParamSpec& p : params_) total += p.numel();
  return total;
}

}  // namespace framework_trainer
