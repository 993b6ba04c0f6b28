// The modelled model: a GPT-2-style decoder (token and position embeddings, pre-norm blocks of
// attention and MLP, a final norm, an LM head tied to the token embedding) and its parameter
// tensors in the order PyTorch registers them (Hugging Face's GPT2LMHeadModel). These are the
// program's real parameter and gradient buffers: their sizes are the model's, so every byte
// an all-reduce or a bucket moves is a real job's (docs/framework_trainer.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace framework_trainer {

// The activations the kernels really compute are this many tokens' (one row each); the
// modelled step's are tokens() rows, which only the kernels' cost parameters carry
// (docs/framework_trainer.md, "What is real").
inline constexpr int kRealTokens = 1;

struct ModelConfig {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int vocab = 0;
  int seq_len = 0;      // context length: the position embedding's rows
  int micro_batch = 0;  // sequences per rank per step

  std::int64_t tokens() const { return static_cast<std::int64_t>(seq_len) * micro_batch; }  // per rank per step
  int headDim() const { return hidden / heads; }
  // Bytes a memory-bound kernel moves over the modelled activations: `per_element` bytes for
  // each of tokens x width elements.
  std::int64_t activationBytes(std::int64_t width, std::int64_t per_element) const { return tokens() * width * per_element; }
};

// The configurations the sample knows (--config, --list-configs).
const std::vector<ModelConfig>& modelPresets();
std::optional<ModelConfig> findModelPreset(const std::string& name);
std::string modelPresetNames();  // "a, b, c"
// Empty when the configuration is usable; otherwise what is wrong with it.
std::string validateModelConfig(const ModelConfig& config);

// What a parameter tensor is, for the kernels that read it and write its gradient.
enum class ParamRole : std::uint8_t {
  TokenEmbedding,     // wte [vocab, hidden], also the LM head's weight
  PositionEmbedding,  // wpe [seq_len, hidden]
  NormWeight,         // ln_1, ln_2, ln_f weight [hidden]
  NormBias,
  LinearWeight,       // Conv1D weight [in, out]
  LinearBias,         // [out]
};

struct ParamSpec {
  std::string name;  // e.g. "h.3.mlp.c_fc.weight"
  ParamRole role = ParamRole::LinearWeight;
  std::int64_t rows = 0, cols = 1;  // a vector has one column
  std::int64_t numel() const { return rows * cols; }
  std::size_t bytes() const { return static_cast<std::size_t>(numel()) * sizeof(float); }
};

// Indices into the parameter list of one block's tensors.
struct BlockParams {
  int ln1_weight, ln1_bias, attn_weight, attn_bias, attn_proj_weight, attn_proj_bias;
  int ln2_weight, ln2_bias, fc_weight, fc_bias, mlp_proj_weight, mlp_proj_bias;
};

// The parameter list: wte, wpe, then per block ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
// mlp.c_proj (weight then bias each), then ln_f.
class ParamLayout {
 public:
  explicit ParamLayout(const ModelConfig& config);

  const std::vector<ParamSpec>& params() const { return params_; }
  int size() const { return static_cast<int>(params_.size()); }
  const ParamSpec& operator[](int index) const { return params_[static_cast<std::size_t>(index)]; }
  int tokenEmbedding() const { return 0; }
  int positionEmbedding() const { return 1; }
  const BlockParams& block(int layer) const { return blocks_[static_cast<std::size_t>(layer)]; }
  int finalNormWeight() const { return final_norm_weight_; }
  int finalNormBias() const { return final_norm_weight_ + 1; }
  std::int64_t totalNumel() const;
  std::size_t totalBytes() const { return static_cast<std::size_t>(totalNumel()) * sizeof(float); }

 private:
  std::vector<ParamSpec> params_;
  std::vector<BlockParams> blocks_;
  int final_norm_weight_ = 0;
};

}  // namespace framework_trainer
