// The LLM-sized configuration whose cost dp_trainer's kernels carry. The real model is a tiny
// residual MLP (one MLP layer per transformer block); each kernel also receives the modelled
// block's sizes as integer parameters, so that simgpu's time model (kernel cost from the
// profile, collective bytes scaled by `collectives.bytes_scale`) prices a step of this LLM.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dp_trainer {

struct LlmConfig {
  std::string name;
  int layers = 0;       // transformer blocks (= layers of the real MLP)
  int hidden = 0;       // d_model
  int seq_len = 0;      // tokens per sequence
  int micro_batch = 0;  // sequences per rank per step, processed in one pass

  // Tokens one rank processes per step.
  std::int64_t tokens() const { return std::int64_t{seq_len} * micro_batch; }
  // A block's weights seen as one hidden x (12 * hidden) matrix: 4h^2 for the attention
  // projections (QKV and output) plus 8h^2 for the MLP (h -> 4h -> h).
  std::int64_t blockWidth() const { return std::int64_t{12} * hidden; }
  std::int64_t paramsPerLayer() const { return std::int64_t{hidden} * blockWidth(); }
  // Gradient bytes of one block, in bf16 (what a mixed-precision step all-reduces).
  std::int64_t gradientBytesPerLayer() const { return 2 * paramsPerLayer(); }
  // FLOPs of one block's forward GEMMs (2 per multiply-add); backward costs twice this,
  // one half for the weight gradient and one half for the input gradient. Attention scores
  // (4 * tokens * seq_len * hidden) are not modelled.
  double forwardFlopsPerLayer() const {
    return 2.0 * static_cast<double>(tokens()) * static_cast<double>(paramsPerLayer());
  }
};

// The named presets (GPT-3 paper shapes, sequence length 2048).
const std::vector<LlmConfig>& llmPresets();
std::optional<LlmConfig> findLlmPreset(std::string_view name);
// "gpt-125m, gpt-350m, ..." for help texts and errors.
std::string llmPresetNames();

// The kernels carry these sizes as `int`; a configuration whose values do not fit is refused.
// Returns an empty string when valid, else what is wrong.
std::string validateLlmConfig(const LlmConfig& config);

}  // namespace dp_trainer
