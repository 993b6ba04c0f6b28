#include "dp_trainer/op_counts.hpp"

namespace dp_trainer {

OpCounts setupOpCounts() { return OpCounts{.kernels = 0, .memcpys = 1, .memsets = 0, .collectives = 1}; }

OpCounts iterationOpCounts(const ModelShape& shape, SyncMode mode, std::size_t buckets) {
  const auto layers = static_cast<std::uint64_t>(shape.layers);
  OpCounts counts;
  counts.kernels = layers + 1 + layers + (layers - 1) + layers;
  counts.memcpys = 4;
  counts.memsets = 1;
  counts.collectives = mode == SyncMode::Naive ? layers : static_cast<std::uint64_t>(buckets);
  return counts;
}

}  // namespace dp_trainer
