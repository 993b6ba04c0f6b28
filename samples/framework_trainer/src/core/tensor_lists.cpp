#include "framework_trainer/tensor_lists.hpp"

#include <algorithm>
#include <stdexcept>

namespace framework_trainer {

std::vector<TensorListLaunch> planTensorLists(const std::vector<std::int64_t>& numels, int depth) {
  if (depth < 1 || depth > 5) throw std::invalid_argument("multi-tensor apply takes 1 to 5 tensor lists");
  const int max_tensors = kDepthToMaxTensors[depth - 1];
  std::vector<TensorListLaunch> launches;
  TensorListLaunch open;
  const auto close = [&](int next_first_tensor) {
    launches.push_back(std::move(open));
    open = TensorListLaunch{};
    open.first_tensor = next_first_tensor;
  };
  for (int t = 0; t < static_cast<int>(numels.size()); ++t) {
    const std::int64_t numel = numels[static_cast<std::size_t>(t)];
    if (numel == 0) continue;  // PyTorch skips empty tensors too
    if (open.tensors == 0) open.first_tensor = t;
    const std::int64_t chunks = chunksOf(numel);
    for (std::int64_t c = 0; c < chunks; ++c) {
      const int local = t - open.first_tensor;
      open.tensors = local + 1;
      open.block_to_tensor.push_back(static_cast<unsigned char>(local));
      open.block_to_chunk.push_back(static_cast<int>(c));
      open.elements += std::min<std::int64_t>(kChunkSize, numel - c * kChunkSize);
      const bool blocks_full = static_cast<int>(open.block_to_chunk.size()) == kMaxBlocksPerLaunch;
      const bool tensors_full = open.tensors == max_tensors && c == chunks - 1;
      // A tensor cut mid-way is the next launch's first tensor.
      if (blocks_full || tensors_full) close(c == chunks - 1 ? t + 1 : t);
    }
  }
  if (!open.block_to_chunk.empty()) launches.push_back(std::move(open));
  return launches;
}

}  // namespace framework_trainer
