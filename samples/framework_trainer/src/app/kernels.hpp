// Launchers of framework_trainer's kernels (src/app/kernels.cu). Every launch goes through
// cudaLaunchKernel with an array of pointers to its arguments, the CUDA 12 runtime path that
// PyTorch's wheels take (CUDA 13's nvcc compiles <<<>>> to __cudaLaunchKernel instead). The
// first arguments carry the modelled cost (kernel_args.hpp); the structs carry the real work.
#pragma once

#include "framework_trainer/kernel_args.hpp"
#include "framework_trainer/tensor_lists.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace framework_trainer::kernels {

cudaError_t gemm(cudaStream_t stream, GemmRole role, std::int64_t cost_m, std::int64_t cost_n, std::int64_t cost_k,
                 const GemmArgs& args);
cudaError_t layerNormForward(cudaStream_t stream, std::int64_t cost_bytes, const LayerNormArgs& args);
cudaError_t layerNormBackward(cudaStream_t stream, std::int64_t cost_bytes, const LayerNormBackwardArgs& args);
cudaError_t attentionForward(cudaStream_t stream, std::int64_t cost_batch_heads, std::int64_t cost_seq,
                             std::int64_t cost_head_dim, const AttentionParams& params);
cudaError_t attentionBackward(cudaStream_t stream, std::int64_t cost_batch_heads, std::int64_t cost_seq,
                              std::int64_t cost_head_dim, const AttentionParams& params);
cudaError_t embeddingForward(cudaStream_t stream, std::int64_t cost_bytes, const EmbeddingArgs& args);
cudaError_t embeddingBackward(cudaStream_t stream, std::int64_t cost_bytes, const EmbeddingBackwardArgs& args);
cudaError_t biasGrad(cudaStream_t stream, std::int64_t cost_bytes, const BiasGradArgs& args);
cudaError_t crossEntropyForward(cudaStream_t stream, std::int64_t cost_bytes, const CrossEntropyArgs& args);
cudaError_t crossEntropyBackward(cudaStream_t stream, std::int64_t cost_bytes, const CrossEntropyArgs& args);
cudaError_t gelu(cudaStream_t stream, std::int64_t cost_bytes, int numel, float* out, const float* in);
cudaError_t geluBackward(cudaStream_t stream, std::int64_t cost_bytes, int numel, float* grad_in, const float* grad_out,
                         const float* in);
cudaError_t add(cudaStream_t stream, std::int64_t cost_bytes, int numel, float* out, const float* a, const float* b);
// out = in * scale; `out` may be `in`.
cudaError_t scale(cudaStream_t stream, std::int64_t cost_bytes, int numel, float* out, const float* in, float scale);
cudaError_t multiTensorSgd(cudaStream_t stream, std::int64_t cost_bytes, const TensorListMetadata<2>& lists,
                           const SgdFunctor& sgd);
cudaError_t multiTensorInit(cudaStream_t stream, std::int64_t cost_bytes, const TensorListMetadata<1>& lists,
                            const InitFunctor& init);
cudaError_t multiTensorChecksum(cudaStream_t stream, std::int64_t cost_bytes, const TensorListMetadata<1>& lists,
                                const ChecksumFunctor& checksum);

}  // namespace framework_trainer::kernels
