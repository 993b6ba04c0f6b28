#include "framework_trainer/fsdp_units.hpp"

namespace framework_trainer {
namespace {

void add(Bucket& unit, const ParamLayout& layout, int param) {
  unit.params.push_back(param);
  unit.offsets.push_back(unit.numel);
  unit.numel += static_cast<std::size_t>(layout[param].numel());
}

}  // namespace

std::vector<ShardedBucket> fsdpUnits(const ModelConfig& config, int world_size) {
  const ParamLayout layout(config);
  std::vector<Bucket> units(static_cast<std::size_t>(config.layers) + 1);
  Bucket& root = units[kRootUnit];
  for (int p : {layout.tokenEmbedding(), layout.positionEmbedding(), layout.finalNormWeight(),
                layout.finalNormBias()}) {
    add(root, layout, p);
  }
  for (int l = 0; l < config.layers; ++l) {
    const BlockParams& b = layout.block(l);
    Bucket& unit = units[static_cast<std::size_t>(blockUnit(l))];
    for (int p : {b.ln1_weight, b.ln1_bias, b.attn_weight, b.attn_bias, b.attn_proj_weight, b.attn_proj_bias,
                  b.ln2_weight, b.ln2_bias, b.fc_weight, b.fc_bias, b.mlp_proj_weight, b.mlp_proj_bias}) {
      add(unit, layout, p);
    }
  }
  return shardBuckets(std::move(units), world_size);
}

int paddedUnits(const std::vector<ShardedBucket>& units) {
  int padded = 0;
  for (const ShardedBucket& u : units) padded += u.padded_numel > u.bucket.numel ? 1 : 0;
  return padded;
}

}  // namespace framework_trainer
