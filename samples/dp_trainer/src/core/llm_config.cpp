#include "dp_trainer/llm_config.hpp"

#include <fmt/format.h>

#include <limits>

namespace dp_trainer {

const std::vector<LlmConfig>& llmPresets() {
  // Layers and d_model from "Language Models are Few-Shot Learners" (Table 2.1). The default
  // micro-batch of 2 sequences (4096 tokens per rank) keeps a simulated step near 0.1 s.
  static const std::vector<LlmConfig> presets = {
      {"gpt-125m", 12, 768, 2048, 2},  {"gpt-350m", 24, 1024, 2048, 2},
      {"gpt-760m", 24, 1536, 2048, 2}, {"gpt-1.3b", 24, 2048, 2048, 2},
      {"gpt-2.7b", 32, 2560, 2048, 2}, {"gpt-6.7b", 32, 4096, 2048, 2},
      {"gpt-13b", 40, 5120, 2048, 2},
  };
  return presets;
}

std::optional<LlmConfig> findLlmPreset(std::string_view name) {
  for (const LlmConfig& preset : llmPresets()) {
    if (preset.name == name) return preset;
  }
  return std::nullopt;
}

std::string llmPresetNames() {
  std::string names;
  for (const LlmConfig& preset : llmPresets()) {
    if (!names.empty()) names += ", ";
    names += preset.name;
  }
  return names;
}

std::string validateLlmConfig(const LlmConfig& config) {
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  if (config.layers < 1) return fmt::format("layers must be at least 1 (got {})", config.layers);
  if (config.hidden < 1) return fmt::format("hidden size must be at least 1 (got {})", config.hidden);
  if (config.seq_len < 1) return fmt::format("sequence length must be at least 1 (got {})", config.seq_len);
  if (config.micro_batch < 1) {
    return fmt::format("micro-batch must be at least 1 sequence (got {})", config.micro_batch);
  }
  if (config.tokens() > kIntMax) {
    return fmt::format("sequence length x micro-batch = {} tokens does not fit a kernel's int parameter",
                       config.tokens());
  }
  if (config.blockWidth() > kIntMax) {
    return fmt::format("hidden size {} is too large for a kernel's int parameter", config.hidden);
  }
  return {};
}

}  // namespace dp_trainer
