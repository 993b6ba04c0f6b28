// FSDP's units (ZeRO stage 3), as PyTorch FSDP's transformer auto-wrap policy makes them for
// this model: one unit per transformer block, and the root unit with what no block holds (the
// token and position embeddings, the token embedding also being the tied LM head, and ln_f).
// Each unit's parameters are one flat buffer, each tensor at its offset, padded to a multiple
// of the world size and cut into equal contiguous shards (zero_shards.hpp), rank r keeping only
// shard r between uses.
#pragma once

#include "framework_trainer/model_config.hpp"
#include "framework_trainer/zero_shards.hpp"

#include <vector>

namespace framework_trainer {

// The root unit is first in forward order; block l's unit is l + 1.
inline constexpr int kRootUnit = 0;
inline int blockUnit(int layer) { return layer + 1; }

// Every unit of `config`'s parameters (ParamLayout's indices) in forward order, sharded for
// `world_size` ranks. Every parameter is in exactly one unit.
std::vector<ShardedBucket> fsdpUnits(const ModelConfig& config, int world_size);

// The units whose flat buffer has padding (the full gradient buffer's padding is zeroed before
// it is reduce-scattered, so that the padding of every shard stays zero).
int paddedUnits(const std::vector<ShardedBucket>& units);

}  // namespace framework_trainer
