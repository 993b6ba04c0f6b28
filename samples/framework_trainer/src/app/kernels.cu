// framework_trainer's kernels. Each maps its threads to the indices of its work and calls the
// shared body (framework_trainer/kernel_bodies.hpp); the CPU implementations for simgpu
// (kernels_cpu.cpp) loop over the same indices. The leading cost parameters are unused by the
// maths: simgpu's profile prices the launch from them (profiles/*.json).
#include "kernels.hpp"

#include "framework_trainer/kernel_bodies.hpp"

#include <algorithm>

namespace framework_trainer::device {

namespace b = framework_trainer::body;

// Grid-stride loops: a bounded grid covers work of any size.
#define FT_GRID_STRIDE(i, count)                                                                      \
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (count); \
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

template <GemmRole role>
__global__ void gemm(std::int64_t, std::int64_t, std::int64_t, GemmArgs args) {
  if constexpr (role == GemmRole::AB) {
    FT_GRID_STRIDE(i, static_cast<std::int64_t>(args.rows) * args.n) b::gemmAB(args, static_cast<int>(i));
  } else if constexpr (role == GemmRole::ABt) {
    FT_GRID_STRIDE(i, static_cast<std::int64_t>(args.rows) * args.k) b::gemmABt(args, static_cast<int>(i));
  } else {
    FT_GRID_STRIDE(i, static_cast<std::int64_t>(args.k) * args.n) b::gemmWeightGrad(args, i);
  }
}

__global__ void layer_norm_forward(std::int64_t, LayerNormArgs args) {
  FT_GRID_STRIDE(r, args.rows) b::layerNormRow(args, static_cast<int>(r));
}

// Rows on the first threads, the weight and bias gradients on all of them.
__global__ void layer_norm_backward(std::int64_t, LayerNormBackwardArgs args) {
  FT_GRID_STRIDE(r, args.rows) b::layerNormBackwardRow(args, static_cast<int>(r));
  FT_GRID_STRIDE(j, args.width) b::layerNormParamGrad(args, static_cast<int>(j));
}

__global__ void flash_attention_forward(std::int64_t, std::int64_t, std::int64_t, AttentionParams params) {
  FT_GRID_STRIDE(i, static_cast<std::int64_t>(params.rows) * params.heads) b::attentionForward(params, static_cast<int>(i));
}

__global__ void flash_attention_backward(std::int64_t, std::int64_t, std::int64_t, AttentionParams params) {
  FT_GRID_STRIDE(i, static_cast<std::int64_t>(params.rows) * params.heads) b::attentionBackward(params, static_cast<int>(i));
}

__global__ void embedding_forward(std::int64_t, EmbeddingArgs args) {
  FT_GRID_STRIDE(i, static_cast<std::int64_t>(args.rows) * args.hidden) b::embeddingForward(args, static_cast<int>(i));
}

__global__ void embedding_backward(std::int64_t, EmbeddingBackwardArgs args) {
  FT_GRID_STRIDE(i, args.wte_numel) b::embeddingWteGrad(args, i);
  FT_GRID_STRIDE(i, args.wpe_numel) b::embeddingWpeGrad(args, i);
}

__global__ void bias_grad(std::int64_t, BiasGradArgs args) {
  FT_GRID_STRIDE(j, args.n) b::biasGrad(args, static_cast<int>(j));
}

__global__ void cross_entropy_forward(std::int64_t, CrossEntropyArgs args) {
  if (blockIdx.x == 0 && threadIdx.x == 0) b::crossEntropyForward(args);
}

__global__ void cross_entropy_backward(std::int64_t, CrossEntropyArgs args) {
  FT_GRID_STRIDE(r, args.rows) b::crossEntropyBackwardRow(args, static_cast<int>(r));
}

// PyTorch's vectorized_elementwise_kernel(int N, func_t f, array_t data), with the cost first.
template <typename Functor, int arity>
__global__ void vectorized_elementwise_kernel(std::int64_t, int numel, Functor f, PointerArray<arity> data) {
  FT_GRID_STRIDE(i, numel) b::elementwise(f, data, static_cast<int>(i));
}

// PyTorch's multi_tensor_apply_kernel(T tensorListMeta, U callable, ArgTypes... args): one block
// per chunk.
template <typename Metadata, typename Functor>
__global__ void multi_tensor_apply_kernel(std::int64_t, Metadata lists, Functor f) {
  b::multiTensorBlock(lists, f, static_cast<int>(blockIdx.x), static_cast<int>(threadIdx.x),
                      static_cast<int>(blockDim.x));
}

#undef FT_GRID_STRIDE

}  // namespace framework_trainer::device

namespace framework_trainer::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 4096;

dim3 gridFor(std::int64_t work) {
  return dim3(static_cast<unsigned>(std::clamp<std::int64_t>((work + kThreads - 1) / kThreads, 1, kMaxBlocks)));
}

// cudaLaunchKernel with each argument's address, in order.
template <typename... Args>
cudaError_t launch(const void* kernel, dim3 grid, dim3 block, cudaStream_t stream, const Args&... args) {
  // cudaLaunchKernel copies the arguments and never writes through these.
  void* pointers[] = {const_cast<void*>(static_cast<const void*>(&args))...};
  return cudaLaunchKernel(kernel, grid, block, pointers, 0, stream);
}

template <typename... Args>
cudaError_t launchOver(std::int64_t work, const void* kernel, cudaStream_t stream, Args... args) {
  return launch(kernel, gridFor(work), dim3(kThreads), stream, args...);
}

}  // namespace

cudaError_t gemm(cudaStream_t stream, GemmRole role, std::int64_t cost_m, std::int64_t cost_n, std::int64_t cost_k,
                 const GemmArgs& args) {
  switch (role) {
    case GemmRole::AB:
      return launchOver(static_cast<std::int64_t>(args.rows) * args.n,
                        reinterpret_cast<const void*>(&device::gemm<GemmRole::AB>), stream, cost_m, cost_n, cost_k,
                        args);
    case GemmRole::ABt:
      return launchOver(static_cast<std::int64_t>(args.rows) * args.k,
                        reinterpret_cast<const void*>(&device::gemm<GemmRole::ABt>), stream, cost_m, cost_n, cost_k,
                        args);
    case GemmRole::WeightGrad:
      return launchOver(static_cast<std::int64_t>(args.k) * args.n,
                        reinterpret_cast<const void*>(&device::gemm<GemmRole::WeightGrad>), stream, cost_m, cost_n,
                        cost_k, args);
  }
  return cudaErrorInvalidValue;
}

cudaError_t layerNormForward(cudaStream_t stream, std::int64_t cost_bytes, const LayerNormArgs& args) {
  return launchOver(args.rows, reinterpret_cast<const void*>(&device::layer_norm_forward), stream, cost_bytes, args);
}

cudaError_t layerNormBackward(cudaStream_t stream, std::int64_t cost_bytes, const LayerNormBackwardArgs& args) {
  return launchOver(std::max(args.rows, args.width), reinterpret_cast<const void*>(&device::layer_norm_backward), stream,
                    cost_bytes, args);
}

cudaError_t attentionForward(cudaStream_t stream, std::int64_t cost_batch_heads, std::int64_t cost_seq,
                             std::int64_t cost_head_dim, const AttentionParams& params) {
  return launchOver(static_cast<std::int64_t>(params.rows) * params.heads,
                    reinterpret_cast<const void*>(&device::flash_attention_forward), stream, cost_batch_heads, cost_seq,
                    cost_head_dim, params);
}

cudaError_t attentionBackward(cudaStream_t stream, std::int64_t cost_batch_heads, std::int64_t cost_seq,
                              std::int64_t cost_head_dim, const AttentionParams& params) {
  return launchOver(static_cast<std::int64_t>(params.rows) * params.heads,
                    reinterpret_cast<const void*>(&device::flash_attention_backward), stream, cost_batch_heads,
                    cost_seq, cost_head_dim, params);
}

cudaError_t embeddingForward(cudaStream_t stream, std::int64_t cost_bytes, const EmbeddingArgs& args) {
  return launchOver(static_cast<std::int64_t>(args.rows) * args.hidden,
                    reinterpret_cast<const void*>(&device::embedding_forward), stream, cost_bytes, args);
}

cudaError_t embeddingBackward(cudaStream_t stream, std::int64_t cost_bytes, const EmbeddingBackwardArgs& args) {
  return launchOver(std::max(args.wte_numel, args.wpe_numel), reinterpret_cast<const void*>(&device::embedding_backward),
                    stream, cost_bytes, args);
}

cudaError_t biasGrad(cudaStream_t stream, std::int64_t cost_bytes, const BiasGradArgs& args) {
  return launchOver(args.n, reinterpret_cast<const void*>(&device::bias_grad), stream, cost_bytes, args);
}

cudaError_t crossEntropyForward(cudaStream_t stream, std::int64_t cost_bytes, const CrossEntropyArgs& args) {
  return launchOver(1, reinterpret_cast<const void*>(&device::cross_entropy_forward), stream, cost_bytes, args);
}

cudaError_t crossEntropyBackward(cudaStream_t stream, std::int64_t cost_bytes, const CrossEntropyArgs& args) {
  return launchOver(args.rows, reinterpret_cast<const void*>(&device::cross_entropy_backward), stream, cost_bytes, args);
}

cudaError_t gelu(cudaStream_t stream, std::int64_t cost_bytes, int numel, float* out, const float* in) {
  const PointerArray<2> data{{reinterpret_cast<char*>(out), reinterpret_cast<char*>(const_cast<float*>(in))}};
  return launchOver(numel, reinterpret_cast<const void*>(&device::vectorized_elementwise_kernel<GeluForward, 2>), stream,
                    cost_bytes, numel, GeluForward{}, data);
}

cudaError_t geluBackward(cudaStream_t stream, std::int64_t cost_bytes, int numel, float* grad_in, const float* grad_out,
                         const float* in) {
  const PointerArray<3> data{{reinterpret_cast<char*>(grad_in), reinterpret_cast<char*>(const_cast<float*>(grad_out)),
                              reinterpret_cast<char*>(const_cast<float*>(in))}};
  return launchOver(numel, reinterpret_cast<const void*>(&device::vectorized_elementwise_kernel<GeluBackward, 3>),
                    stream, cost_bytes, numel, GeluBackward{}, data);
}

cudaError_t add(cudaStream_t stream, std::int64_t cost_bytes, int numel, float* out, const float* a, const float* b) {
  const PointerArray<3> data{{reinterpret_cast<char*>(out), reinterpret_cast<char*>(const_cast<float*>(a)),
                              reinterpret_cast<char*>(const_cast<float*>(b))}};
  return launchOver(numel, reinterpret_cast<const void*>(&device::vectorized_elementwise_kernel<AddTensors, 3>), stream,
                    cost_bytes, numel, AddTensors{}, data);
}

cudaError_t scale(cudaStream_t stream, std::int64_t cost_bytes, int numel, float* out, const float* in, float scale) {
  const PointerArray<2> data{{reinterpret_cast<char*>(out), reinterpret_cast<char*>(const_cast<float*>(in))}};
  return launchOver(numel, reinterpret_cast<const void*>(&device::vectorized_elementwise_kernel<ScaleTensor, 2>), stream,
                    cost_bytes, numel, ScaleTensor{scale}, data);
}

cudaError_t multiTensorSgd(cudaStream_t stream, std::int64_t cost_bytes, const TensorListMetadata<2>& lists,
                           const SgdFunctor& sgd) {
  return launch(reinterpret_cast<const void*>(&device::multi_tensor_apply_kernel<TensorListMetadata<2>, SgdFunctor>),
                dim3(static_cast<unsigned>(lists.blocks_this_launch)), dim3(kBlockSize), stream, cost_bytes,
                lists, sgd);
}

cudaError_t multiTensorInit(cudaStream_t stream, std::int64_t cost_bytes, const TensorListMetadata<1>& lists,
                            const InitFunctor& init) {
  return launch(reinterpret_cast<const void*>(&device::multi_tensor_apply_kernel<TensorListMetadata<1>, InitFunctor>),
                dim3(static_cast<unsigned>(lists.blocks_this_launch)), dim3(kBlockSize), stream, cost_bytes,
                lists, init);
}

cudaError_t multiTensorChecksum(cudaStream_t stream, std::int64_t cost_bytes, const TensorListMetadata<1>& lists,
                                const ChecksumFunctor& checksum) {
  return launch(
      reinterpret_cast<const void*>(&device::multi_tensor_apply_kernel<TensorListMetadata<1>, ChecksumFunctor>),
      dim3(static_cast<unsigned>(lists.blocks_this_launch)), dim3(kBlockSize), stream, cost_bytes,
      lists, checksum);
}

}  // namespace framework_trainer::kernels
