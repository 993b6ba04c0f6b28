// PyTorch's multi-tensor apply (aten/src/ATen/native/cuda/MultiTensorApply.cuh), which the
// fused and foreach optimizers use: one kernel launch serves many tensors, whose addresses and
// sizes travel in a by-value struct of up to 4 KB (TensorListMetadata). The work is cut into
// chunks of 65536 elements, one thread block per chunk; a launch takes chunks until it holds
// 320 blocks or as many tensors as the struct has room for at this depth (the number of lists:
// parameters and gradients are depth 2). A tensor cut by a launch continues in the next one.
//
// This header is shared by the CUDA kernels and their CPU implementations (the struct) and by
// the host code that fills it (the plan).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace framework_trainer {

inline constexpr int kChunkSize = 65536;
inline constexpr int kBlockSize = 512;
inline constexpr int kMaxBlocksPerLaunch = 320;
inline constexpr int kDepthToMaxTensors[5] = {110, 64, 48, 36, 30};

template <int depth>
struct TensorListMetadata {
  static constexpr int kMaxTensors = kDepthToMaxTensors[depth - 1];
  const void* addresses[depth][kMaxTensors];
  std::int64_t numel_for_tensor[kMaxTensors];
  unsigned char block_to_tensor[kMaxBlocksPerLaunch];
  int block_to_chunk[kMaxBlocksPerLaunch];
  int start_tensor_this_launch;  // the first tensor's index in the whole list
  // Not in PyTorch's struct, where the grid size says it: a CPU implementation sees only the
  // parameters, so the launch's block count travels here too.
  int blocks_this_launch;
};

// The launches one multi-tensor apply makes over tensors of these sizes.
struct TensorListLaunch {
  int first_tensor = 0;  // index in the whole list of local tensor 0
  int tensors = 0;       // local tensors first_tensor .. first_tensor + tensors - 1
  std::vector<unsigned char> block_to_tensor;  // local tensor of each block
  std::vector<int> block_to_chunk;             // chunk of that tensor
  std::int64_t elements = 0;                   // elements the launch covers
};

std::vector<TensorListLaunch> planTensorLists(const std::vector<std::int64_t>& numels, int depth);

// The structs of a plan's launches: tensor t of list l starts at addresses[l][t] and holds
// numels[t] elements (the sizes the plan was made for).
template <int depth>
std::vector<TensorListMetadata<depth>> fillTensorLists(const std::vector<TensorListLaunch>& plan,
                                                       const std::array<std::vector<const void*>, depth>& addresses,
                                                       const std::vector<std::int64_t>& numels) {
  std::vector<TensorListMetadata<depth>> out;
  out.reserve(plan.size());
  for (const TensorListLaunch& launch : plan) {
    TensorListMetadata<depth>& md = out.emplace_back();
    md = {};
    for (int local = 0; local < launch.tensors; ++local) {
      const auto tensor = static_cast<std::size_t>(launch.first_tensor + local);
      for (std::size_t list = 0; list < depth; ++list) md.addresses[list][local] = addresses[list][tensor];
      md.numel_for_tensor[local] = numels[tensor];
    }
    for (std::size_t block = 0; block < launch.block_to_chunk.size(); ++block) {
      md.block_to_tensor[block] = launch.block_to_tensor[block];
      md.block_to_chunk[block] = launch.block_to_chunk[block];
    }
    md.start_tensor_this_launch = launch.first_tensor;
    md.blocks_this_launch = static_cast<int>(launch.block_to_chunk.size());
  }
  return out;
}

// Chunks of a tensor of `numel` elements.
inline std::int64_t chunksOf(std::int64_t numel) { return (numel + kChunkSize - 1) / kChunkSize; }

}  // namespace framework_trainer
